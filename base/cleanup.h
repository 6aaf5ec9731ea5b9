/* Scope-bound cleanup, after systemd and bubblewrap: a variable declared
 * with one of these attributes is released when it leaves scope, and
 * TAKE_PTR()/TAKE_FD() hand ownership on. Every destructor accepts NULL/-1. */
#ifndef AGSBX_BASE_CLEANUP_H
#define AGSBX_BASE_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>
#include <jansson.h>

static inline void agsbx_freep(void *p) { free(*(void **)p); }
static inline void agsbx_closep(int *fd) { if (*fd >= 0) close(*fd); }
static inline void agsbx_fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void agsbx_closedirp(DIR **d) { if (*d) closedir(*d); }
static inline void agsbx_json_decrefp(json_t **j) { json_decref(*j); }

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(agsbx_freep)
#define _cleanup_close_ _cleanup_(agsbx_closep)
#define _cleanup_fclose_ _cleanup_(agsbx_fclosep)
#define _cleanup_closedir_ _cleanup_(agsbx_closedirp)
#define _cleanup_json_ _cleanup_(agsbx_json_decrefp)

#define TAKE_PTR(p) ({ __typeof__(p) _tp = (p); (p) = NULL; _tp; })
#define TAKE_FD(fd) ({ int _tf = (fd); (fd) = -1; _tf; })

#define AGSBX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
