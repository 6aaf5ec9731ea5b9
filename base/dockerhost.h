/* DOCKER_HOST values: the one parser, shared by the Docker probe and the
 * gVisor provider (they once disagreed on how long a socket path may be). */
#ifndef AGSBX_BASE_DOCKERHOST_H
#define AGSBX_BASE_DOCKERHOST_H

#include "base/error.h"

#define AGSBX_DOCKER_DEFAULT_SOCKET "/var/run/docker.sock"

/* The socket path of a DOCKER_HOST value (NULL or "": the default socket;
 * the environment is the caller's business). Only unix:// with an
 * absolute path that fits a sockaddr_un (sizeof sun_path - 1 bytes, the
 * last one being the NUL) is accepted: tcp:// and ssh:// would leave the
 * host (and TLS) out of what can be vouched for. -EINVAL with err (which
 * may be NULL) set: reason "unsupported_scheme" (another URL scheme) or
 * "invalid_docker_host", and a one-line message; -ENOMEM; *path
 * malloc'd. */
int agsbx_dockerhost_socket(const char *docker_host, char **path, struct agsbx_error *err);

#endif
