/* The same six masks as classify.swift, with SSE2 compares and movemask; prints MB/s and the
 * same checksum. */
#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { uint64_t quote, backslash, structural, whitespace, control, non_ascii; } masks;

static uint64_t checksum(masks m) {
    return m.quote + m.backslash * 3 + m.structural * 5 + m.whitespace * 7 + m.control * 11 + m.non_ascii * 13;
}

static inline uint64_t eq(__m128i x, char byte) { return (uint64_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(byte))); }

__attribute__((noinline)) static masks classify(const uint8_t *block) {
    masks m = {0};
    for (int part = 0; part < 4; part++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(block + 16 * part));
        int shift = 16 * part;
        m.quote |= eq(x, '"') << shift;
        m.backslash |= eq(x, '\\') << shift;
        m.structural |= (eq(x, '{') | eq(x, '}') | eq(x, '[') | eq(x, ']') | eq(x, ':') | eq(x, ',')) << shift;
        m.whitespace |= (eq(x, ' ') | eq(x, '\n') | eq(x, '\r') | eq(x, '\t')) << shift;
        /* x < 0x20 unsigned: the top three bits clear. */
        m.control |= (uint64_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(x, _mm_set1_epi8((char)0xE0)), _mm_setzero_si128())) << shift;
        m.non_ascii |= (uint64_t)_mm_movemask_epi8(x) << shift;
    }
    return m;
}

static int compare(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
    FILE *file = fopen(argv[1], "rb");
    if (!file) return 1;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    uint8_t *text = malloc(size);
    if (fread(text, 1, size, file) != (size_t)size) return 1;
    long length = size - size % 64;
    double times[15];
    uint64_t sum = 0;
    for (int round = 0; round < 15; round++) {
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        sum = 0;
        for (long offset = 0; offset < length; offset += 64) sum = sum * 31 + checksum(classify(text + offset));
        clock_gettime(CLOCK_MONOTONIC, &end);
        times[round] = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    }
    qsort(times, 15, sizeof times[0], compare);
    printf("C, SSE2 compares and movemask: median %.0f MB/s (checksum %016llx)\n", length / 1048576.0 / times[7], (unsigned long long)sum);
    return 0;
}
