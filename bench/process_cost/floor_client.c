/* SPDX-License-Identifier: Apache-2.0 */
/* The floor of bench/process_cost: a bare socket client, as bench/bootstrap_bench's floor
 * variant: connect to 127.0.0.1:SDDP_PC_PORT, read the 128-byte id, report, exit at once. No
 * authentication, no C++ runtime: the least a process can do to hold the id. Same output as
 * rank_client.cpp. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double cpu_ms(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

int main(void) {
    const char* port = getenv("SDDP_PC_PORT");
    const char* spawn = getenv("SDDP_PC_SPAWN_NS");
    if (port == NULL || spawn == NULL) {
        fprintf(
            stderr,
            "floor_client: SDDP_PC_PORT or SDDP_PC_SPAWN_NS unset (run it through process_cost)\n");
        return 2;
    }
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)atoi(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
        perror("floor_client: connect");
        return 1;
    }
    unsigned char id[128];
    size_t got = 0;
    while (got < sizeof id) {
        ssize_t n = read(fd, id + got, sizeof id - got);
        if (n <= 0) {
            fprintf(stderr, "floor_client: short id\n");
            return 1;
        }
        got += (size_t)n;
    }
    double cpu = cpu_ms();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double wall = ((double)ts.tv_sec * 1e9 + (double)ts.tv_nsec - atof(spawn)) * 1e-6;
    if (id[5] != (unsigned char)(5 * 131 % 256)) {
        fprintf(stderr, "floor_client: wrong id\n");
        return 1;
    }
    printf("cpu_ms=%.4f wall_ms=%.4f\n", cpu, wall);
    fflush(stdout);
    _exit(0);
}
