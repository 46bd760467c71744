/*
 * The static gate: before a candidate kernel runs at all, kope inspects
 * what the compiler made of it. The source text (directives), the
 * preprocessed text (pragmas and attributes after macro expansion), the
 * assembly (inline asm, system-call instructions) and the ELF object
 * (undefined and defined symbols, sections, writable state, load-time
 * code) must all pass. A refusal names the rule and the offending symbol,
 * header, section or line; its verdict is `forbidden`.
 *
 * Every check works on text or bytes in memory so it can be unit tested;
 * kope_gate_files reads the artifacts a candidate build leaves behind.
 */
#ifndef KOPE_EVAL_GATE_H
#define KOPE_EVAL_GATE_H

#include <stddef.h>
#include "kope/core.h"

/* Each check returns 0 when the input passes, or -1 with a one-line
 * "rule: detail" written to why (size bytes). */

/* Directives of the raw source: #include only of allow-listed system
 * headers, no #line or line markers, no #pragma (GCC) optimize, no
 * .incbin anywhere. */
int kope_gate_source(const char *src, char *why, size_t size);
/* Preprocessed text (gcc -E): lines of the main file must carry no
 * optimize pragma or attribute and no constructor/destructor/ifunc
 * attribute; files it includes directly must be allow-listed headers. */
int kope_gate_preprocessed(const char *text, char *why, size_t size);
/* The asm statements of the main file's preprocessed text, read as the
 * assembler will: adjacent literals joined and decoded, C and '#'
 * comments removed; a directive, a system-call/interrupt instruction or
 * a name of OpenMP's lock symbols refuses; so does any asm label on a
 * declaration (called by kope_gate_preprocessed). */
int kope_gate_inline_asm(const char *text, char *why, size_t size);
/* Assembly (gcc -S): inline asm may hold instructions only (no
 * directives), and no system-call or interrupt instruction anywhere. */
int kope_gate_asm(const char *text, char *why, size_t size);
/* ELF64 relocatable object: undefined symbols within the allow-list, the
 * only defined global symbol is entry, no constructor/destructor
 * sections, no writable static or thread-local state, no ifunc, no
 * writable code. */
int kope_gate_object(const unsigned char *elf, size_t n, const char *entry, char *why,
                     size_t size);

/* 1 when a kernel may reference this external symbol. */
int kope_gate_symbol_allowed(const char *name);
/* 1 when a kernel may #include <name>. */
int kope_gate_header_allowed(const char *name);

/* Run every check on a candidate build in dir: dir/kernel.c, kernel.i,
 * kernel.s and kernel.o (the .i and .s are skipped when absent). Returns
 * 0 admitted, -1 refused (why filled), or a KOPE_E* code with err set when
 * an artifact cannot be read. */
int kope_gate_files(const char *dir, const char *source, const char *entry, char *why,
                    size_t size, kope_err *err);

#endif
