// A thin shim over libmicrohttpd: it re-exports <microhttpd.h> and wraps the variadic calls
// Swift cannot make (MHD_start_daemon, MHD_get_daemon_info). Nothing else lives here.
#ifndef C_MICRO_HTTPD_H
#define C_MICRO_HTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// What cmhd_start needs, as plain fields.
typedef struct {
    /// The address to listen on (IPv4 or IPv6, port included); NULL listens on all IPv4
    /// interfaces at `port`.
    const struct sockaddr *address;
    uint16_t port;
    /// Non-zero when `address` is IPv6.
    int ipv6;
    /// Worker threads, each running its own epoll loop.
    unsigned int threads;
    unsigned int connection_limit;
    unsigned int connection_timeout_seconds;
    /// Per-connection memory for headers and buffers (not the body, which the caller keeps).
    size_t connection_memory_limit;
    /// Each worker thread's stack, in bytes.
    size_t thread_stack_size;
} CMicroHTTPDConfig;

/// Starts a daemon with an internal epoll thread pool, inter-thread signalling (so that it can
/// be quiesced) and suspend/resume (so that requests can be answered from other threads).
/// Returns NULL when it cannot start (the port is taken, for example).
struct MHD_Daemon *cmhd_start(const CMicroHTTPDConfig *config,
                              MHD_AccessHandlerCallback handler, void *handler_context,
                              MHD_RequestCompletedCallback completed, void *completed_context);

/// The port the daemon listens on (useful when it was started on port 0), or 0.
uint16_t cmhd_bound_port(struct MHD_Daemon *daemon);

#endif
