/* NULL-terminated vectors of malloc'd strings (argv, envp): the one
 * definition of how they are built, copied and freed. */
#ifndef AGSBX_BASE_STRV_H
#define AGSBX_BASE_STRV_H

#include <stddef.h>

/* Frees every string and the vector; NULL is fine. */
void agsbx_strv_free(char **v);
static inline void agsbx_strv_freep(char ***v) { agsbx_strv_free(*v); }
#define _cleanup_strv_ __attribute__((cleanup(agsbx_strv_freep)))

/* Appends s, taking ownership (freed on failure), and keeps *v
 * NULL-terminated; *n counts the strings. s NULL (a failed strdup or
 * asprintf before the call) is -ENOMEM, so results can be or'ed. */
int agsbx_strv_push(char ***v, size_t *n, char *s);

/* A malloc'd deep copy (NULL stays NULL; NULL also on ENOMEM). */
char **agsbx_strv_dup(const char *const *v);

/* head then tail (both NULL-terminated) in one new NULL-terminated
 * vector of the same strings, borrowed: free() the vector only, while
 * the strings live. NULL on ENOMEM. For argv prefixes (a wrapper, its
 * options, then the program's argv). */
const char **agsbx_strv_concat(const char *const *head, const char *const *tail);

#endif
