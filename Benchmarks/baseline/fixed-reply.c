/* A raw libmicrohttpd server for side-by-side load figures: it keeps each request's body (as
 * any server that uses a body must) and answers every request with one fixed JSON reply, on a
 * pool of polling threads, one per core. It does what the team's reference server in
 * ../shared/bench does (the body gathered into a buffer freed when the request completes, 64 KiB
 * of connection memory); what LiveDelta adds on top of libmicrohttpd is then the difference.
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

/* One request's body as it arrives. */
struct body {
    char *bytes;
    size_t length, capacity;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    (void)cls; (void)url; (void)method; (void)version;
    struct body *body = *state;
    if (body == NULL) {              /* the head: the body, if any, comes in the next calls */
        body = calloc(1, sizeof *body);
        if (body == NULL) return MHD_NO;
        *state = body;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {     /* a piece of the body: kept */
        size_t needed = body->length + *upload_data_size;
        if (needed > body->capacity) {
            size_t capacity = body->capacity ? body->capacity : 1024;
            while (capacity < needed) capacity *= 2;
            char *grown = realloc(body->bytes, capacity);
            if (grown == NULL) return MHD_NO;
            body->bytes = grown;
            body->capacity = capacity;
        }
        memcpy(body->bytes + body->length, upload_data, *upload_data_size);
        body->length = needed;
        *upload_data_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, fixed);
}

static void completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
    (void)cls; (void)connection; (void)code;
    struct body *body = *state;
    if (body != NULL) {
        free(body->bytes);
        free(body);
        *state = NULL;
    }
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
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)atoi(argv[2]), MHD_OPTION_CONNECTION_LIMIT, 1000u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
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
