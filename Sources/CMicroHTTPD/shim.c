#include "CMicroHTTPD.h"

#include <string.h>

// Leaves the path and query arguments as sent: the server decodes them itself, the path one
// segment at a time, so that an encoded `/` stays inside its segment and `%00` cannot cut a
// path short (libmicrohttpd decodes the whole path in place, into a C string).
static size_t cmhd_keep_escaped(void *context, struct MHD_Connection *connection, char *text) {
    (void)context;
    (void)connection;
    return strlen(text);
}

struct MHD_Daemon *cmhd_start(const CMicroHTTPDConfig *config,
                              MHD_AccessHandlerCallback handler, void *handler_context,
                              MHD_RequestCompletedCallback completed, void *completed_context,
                              MHD_NotifyConnectionCallback notify, void *notify_context) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET
                       | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO;
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_CONNECTION_LIMIT, config->connection_limit, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)config->connection_memory_limit, NULL},
        {MHD_OPTION_THREAD_STACK_SIZE, (intptr_t)config->thread_stack_size, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_context},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, notify_context},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)cmhd_keep_escaped, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

int cmhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

void *cmhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

size_t cmhd_request_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

int cmhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds) == MHD_YES;
}
