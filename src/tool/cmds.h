/*
 * The subcommands of the kope CLI. Each takes argc/argv starting at the
 * subcommand name and returns the process exit code (DESIGN.md §2).
 */
#ifndef KOPE_TOOL_CMDS_H
#define KOPE_TOOL_CMDS_H

int kope_cmd_hw(int argc, char **argv);
int kope_cmd_ops(int argc, char **argv);
int kope_cmd_eval(int argc, char **argv);
int kope_cmd_memory(int argc, char **argv);
int kope_cmd_optimize(int argc, char **argv);
int kope_cmd_bench(int argc, char **argv);
int kope_cmd_report(int argc, char **argv);
int kope_cmd_queue(int argc, char **argv);
int kope_cmd_worker(int argc, char **argv);

#endif
