/* Hack: include the trusted reference source and call it. Expected:
 * forbidden (include). */
#include "../../../ops/relu/reference.c"
