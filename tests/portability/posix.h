/* Force-included (-include) into every translation unit of the portable
 * build by tests/cli/portable.sh: on this Linux host it makes the code see
 * a platform that is neither Linux nor macOS (__linux__ undefined), and it
 * poisons the Linux-only API, so the portable subset (AGSBX_PORTABLE) is
 * checked as far as Linux allows for the macOS build. The common POSIX
 * headers come first: their declarations of the poisoned names are not
 * uses. A source including a Linux-only header afterwards (<sys/eventfd.h>,
 * <sys/prctl.h>, <sched.h>, <sys/sysinfo.h>, <linux/...>) fails here too. */
#ifndef AGSBX_TESTS_POSIX_H
#define AGSBX_TESTS_POSIX_H

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#undef __linux__
#undef __linux
#undef linux
#undef __gnu_linux__

#pragma GCC poison pipe2 accept4 dup3 eventfd prctl signalfd epoll_create epoll_create1 epoll_ctl
#pragma GCC poison epoll_wait pidfd_open pidfd_send_signal memfd_create unshare setns syscall
#pragma GCC poison getrandom execvpe setresuid setresgid getresuid getresgid clone clone3
#pragma GCC poison strerrorname_np strerrordesc_np sigabbrev_np sigdescr_np get_nprocs
#pragma GCC poison O_PATH O_TMPFILE SOCK_CLOEXEC SOCK_NONBLOCK MSG_NOSIGNAL MAP_STACK
#pragma GCC poison PR_SET_PDEATHSIG PR_SET_CHILD_SUBREAPER CLONE_NEWUSER

#endif
