// A thin shim over libmicrohttpd: it re-exports <microhttpd.h> and wraps the variadic calls
// Swift cannot make (MHD_start_daemon, MHD_get_connection_info). Nothing else lives here.
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
/// `notify` hears of every connection that starts and closes. Returns NULL when it cannot start.
struct MHD_Daemon *cmhd_start(const CMicroHTTPDConfig *config,
                              MHD_AccessHandlerCallback handler, void *handler_context,
                              MHD_RequestCompletedCallback completed, void *completed_context,
                              MHD_NotifyConnectionCallback notify, void *notify_context);

/// The connection's socket, or -1.
int cmhd_connection_fd(struct MHD_Connection *connection);

/// The pointer the application keeps for the connection (set on MHD_CONNECTION_NOTIFY_STARTED).
void *cmhd_socket_context(struct MHD_Connection *connection);

/// Bytes of the request line and headers of the request being handled, or 0.
size_t cmhd_request_header_size(struct MHD_Connection *connection);

/// Gives the connection a timeout of its own (MHD_set_connection_option, variadic); non-zero
/// where it was set.
int cmhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds);

#endif
