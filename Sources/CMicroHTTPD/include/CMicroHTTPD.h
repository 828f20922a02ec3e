// A thin shim over libmicrohttpd: it re-exports <microhttpd.h> and wraps the variadic call
// Swift cannot make (MHD_start_daemon). Nothing else lives here.
#ifndef C_MICRO_HTTPD_H
#define C_MICRO_HTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// What cmhd_start needs, as plain fields.
typedef struct {
    unsigned int connection_limit;
    unsigned int connection_timeout_seconds;
    /// Per-connection memory for headers and buffers (not the body, which the caller keeps).
    size_t connection_memory_limit;
    /// The daemon thread's stack, in bytes.
    size_t thread_stack_size;
} CMicroHTTPDConfig;

/// Starts a daemon with one internal epoll thread and no listening socket of its own: the
/// caller accepts connections and hands them over with MHD_add_connection. Inter-thread
/// signalling and suspend/resume are on, so that requests can be answered from other threads.
/// Returns NULL when it cannot start.
struct MHD_Daemon *cmhd_start(const CMicroHTTPDConfig *config,
                              MHD_AccessHandlerCallback handler, void *handler_context,
                              MHD_RequestCompletedCallback completed, void *completed_context);

#endif
