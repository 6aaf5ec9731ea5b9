#include "base/dockerhost.h"
#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#define SCHEME "unix://"

__attribute__((format(printf, 3, 4)))
static int refuse(struct agsbx_error *err, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	agsbx_error_vset(err, reason, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int agsbx_dockerhost_socket(const char *docker_host, char **path, struct agsbx_error *err)
{
	*path = NULL;
	if (!docker_host || !*docker_host)
		docker_host = SCHEME AGSBX_DOCKER_DEFAULT_SOCKET;
	if (strncmp(docker_host, SCHEME, sizeof SCHEME - 1) != 0) {
		const char *sep = strstr(docker_host, "://");
		if (sep)
			return refuse(err, "unsupported_scheme", "unsupported DOCKER_HOST scheme '%.*s://' (only unix:// is supported)",
				      (int)(sep - docker_host > 32 ? 32 : sep - docker_host), docker_host);
		return refuse(err, "invalid_docker_host", "unsupported DOCKER_HOST scheme: '%.64s' is not a URL (expected unix:///path)",
			      docker_host);
	}
	const char *p = docker_host + sizeof SCHEME - 1;
	if (p[0] != '/')
		return refuse(err, "invalid_docker_host", "unsupported DOCKER_HOST scheme: unix:// needs an absolute path, not '%.64s'",
			      p);
	struct sockaddr_un sun;
	size_t len = strlen(p);
	if (len >= sizeof sun.sun_path)
		return refuse(err, "invalid_docker_host", "DOCKER_HOST socket path is %zu bytes; a unix socket path holds at most %zu",
			      len, sizeof sun.sun_path - 1);
	*path = strdup(p);
	return *path ? 0 : -ENOMEM;
}
