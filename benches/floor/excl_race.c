/* The floor of a natural race: K forked contenders, each blocked on its own pipe, released by
 * one byte written to each in turn, race open(O_CREAT|O_EXCL) on one name; the parent counts
 * the winners from their answers, checks the name on disk (stat), removes it, and goes again.
 * The same race as the product's node.writeFileSync.wx cell, with nothing but the system calls.
 *
 *   excl_race DIR TRIALS CONTENDERS     prints: trials, multi-winner trials, trials/s
 *
 * open(2): "O_EXCL ... If pathname already exists, then open() fails with the error EEXIST". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s DIR TRIALS CONTENDERS\n", argv[0]); return 2; }
    const char *dir = argv[1];
    long trials = atol(argv[2]);
    int k = atoi(argv[3]);
    if (trials < 1 || k < 2 || k > 64) { fprintf(stderr, "TRIALS >= 1, CONTENDERS 2..64\n"); return 2; }
    char target[4096];
    snprintf(target, sizeof target, "%s/target", dir);
    int go[64][2], res[64][2];
    for (int i = 0; i < k; i++) {
        if (pipe(go[i]) || pipe(res[i])) { perror("pipe"); return 1; }
        pid_t p = fork();
        if (p < 0) { perror("fork"); return 1; }
        if (p == 0) {
            char c;
            while (read(go[i][0], &c, 1) == 1 && c == 'g') {
                int fd = open(target, O_CREAT | O_EXCL | O_WRONLY, 0644);
                char r = fd >= 0 ? '1' : (errno == EEXIST ? '0' : 'x');
                if (fd >= 0) close(fd);
                if (write(res[i][1], &r, 1) != 1) _exit(1);
            }
            _exit(0);
        }
    }
    long multi = 0, errors = 0;
    double t0 = now_s();
    for (long t = 0; t < trials; t++) {
        for (int i = 0; i < k; i++) if (write(go[i][1], "g", 1) != 1) { perror("write"); return 1; }
        int winners = 0;
        for (int i = 0; i < k; i++) {
            char r;
            if (read(res[i][0], &r, 1) != 1) { perror("read"); return 1; }
            winners += r == '1';
            errors += r == 'x';
        }
        struct stat st;
        if (stat(target, &st) != 0) errors++;
        if (winners > 1) multi++;
        if (unlink(target) != 0) { perror("unlink"); return 1; }
    }
    double dt = now_s() - t0;
    for (int i = 0; i < k; i++) if (write(go[i][1], "q", 1) != 1) return 1;
    while (wait(NULL) > 0) {}
    printf("%ld %ld %.0f %ld\n", trials, multi, trials / dt, errors);
    return 0;
}
