// Linux's event interfaces that Glibc's Swift module leaves out (epoll(7), eventfd(2)),
// re-exported for MicroHTTP's hang-up watcher and the benchmarks' stream readers. Nothing else
// lives here.
#ifndef C_LINUX_EVENTS_H
#define C_LINUX_EVENTS_H

#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
