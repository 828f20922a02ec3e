/* A raw libmicrohttpd server for side-by-side load figures: it reads (and drops) any request
 * body and answers every request with one fixed JSON reply, on a pool of polling threads, one
 * per core. What LiveDelta adds on top of libmicrohttpd is then the difference between the two.
 * Usage: fixed-reply PORT THREADS */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char reply[] = "{\"animation\":\"preciseAnimations\",\"delta\":{\"deletions\":[],\"insertions\":[],\"moves\":[],\"reloads\":[]},"
                            "\"changeCount\":0,\"oldCount\":20,\"newCount\":20}";
static struct MHD_Response *fixed;
static int started_marker;

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    if (*state == NULL) {            /* the head: the body, if any, comes in the next calls */
        *state = &started_marker;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {     /* a piece of the body: taken, and dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, fixed);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s PORT THREADS\n", argv[0]);
        return 2;
    }
    fixed = MHD_create_response_from_buffer(strlen(reply), (void *)reply, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(fixed, "Content-Type", "application/json");
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)atoi(argv[1]), NULL, NULL, answer, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)atoi(argv[2]), MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "could not start on port %s\n", argv[1]);
        return 1;
    }
    printf("listening port=%s\n", argv[1]);
    fflush(stdout);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigprocmask(SIG_BLOCK, &signals, NULL);
    int received;
    sigwait(&signals, &received);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(fixed);
    return 0;
}
