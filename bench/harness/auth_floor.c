/* SPDX-License-Identifier: Apache-2.0 */
/* The authenticated floor: the fastest program we know that does the rendezvous's job with its
 * guarantees, so that the library is judged against the cost of authenticating every rank and
 * not against a bare socket that authenticates nobody (bootstrap_bench's `floor`).
 *
 * What it does, per connection (client = the rank that connects, server = rank 0 or a leader):
 *   server -> client  challenge: a fresh 32-byte server nonce (getrandom)
 *   client -> server  hello: rank, world size, local rank, local world size, node, step tag,
 *                     host, a fresh client nonce and
 *                     HMAC(secret, "af client" | tag | server nonce | client nonce | rank |
 *                          world | local rank | local world | node | host)
 *   server -> client  only once that proof verifies (constant-time compare) and the claims fit
 *                     (this step's tag and world size, a rank this server serves, not seen
 *                     before): welcome + id: server rank, host, the 128-byte id and
 *                     HMAC(secret, "af server" | tag | client nonce | server nonce | client rank |
 *                          server rank | host | SHA-256(id))
 * The server's proof covers the id, so the client acts on an id only from a server that holds
 * the secret, fresh for this connection (both nonces), and a recorded hello or welcome cannot be
 * replayed. The all-gather that follows is sealed the same way: a client's records carry
 * HMAC(secret, "af up" | client nonce | server nonce | records), the table coming down
 * HMAC(secret, "af down" | client nonce | server nonce | SHA-256(table)), the table hashed once
 * however many children receive it. Each direction of a connection carries one message of each
 * kind in a fixed order, so the labels stand for the library's sequence numbers. The secret is
 * keyed once per process (hmac_sha256_set_key), as the library keys it once per rendezvous;
 * Nettle resets a context to that keyed state after each digest. On the node-local socket both
 * ends check the peer's uid (SO_PEERCRED) before anything else, and the socket's name is a hash
 * of the secret, as the library's. A refused connect is retried with the library's pauses.
 *
 * With job->barrier (authfloor-tree-barrier) it keeps the library's contract, a complete world
 * before the id: the welcome carries the server's proof without the id,
 *   HMAC(secret, "af welcome" | tag | client nonce | server nonce | client rank | server rank |
 *        host),
 * a leader whose node is complete says so to rank 0 with HMAC(secret, "af node" | client nonce |
 * server nonce), and once every rank is in, the id goes down in a message of its own,
 * id | HMAC(secret, "af id" | client nonce | server nonce | SHA-256(id)), forwarded by the
 * leaders: one message and one wake-up more per rank, as the library has.
 *
 * What it does not do, which the library does: without job->barrier, wait for the whole world
 * before the id goes out (the server welcomes each rank with the id as soon as it has proven
 * itself, as the bare floor writes it as it accepts); name which ranks are missing; refuse with a
 * proven reason, bound each handshake's time, shed a flood of unauthenticated connections fairly,
 * report joins up the tree, check that both ends call the same collective, or frame messages
 * of any other kind. A rank that sends something wrong is closed; a missing rank hangs the
 * others until the harness's deadline. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "auth_floor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
    NONCE = 32,
    MAC = 32,
    MAX_TAG = 64,
    MAX_HOST = 32,
    HELLO_FIXED = 22, /* five u32, tag length, host length */
    HELLO_MAX = HELLO_FIXED + MAX_TAG + MAX_HOST + NONCE + MAC,
    WELCOME_FIXED = 5, /* server rank, host length */
    WELCOME_MAX = WELCOME_FIXED + MAX_HOST + AF_ID_BYTES + MAC,
    UP_ITEM = 4 + AF_RECORD_BYTES,
    DEADLINE_S = 120,
};

struct rank_ctx {
    const struct af_job* job;
    int rank, node, local_rank, nodes;
    struct hmac_sha256_ctx key; /* the step secret, keyed once */
    uint8_t tag[MAX_TAG];
    uint8_t tag_len;
    char host[MAX_HOST];
    uint8_t host_len;
    uid_t uid;
    double deadline;
    unsigned seed; /* retry jitter */
    struct af_result* res;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The two moments the harness reports: this rank holds the id; it holds every record. */
static void reached_id(const struct rank_ctx* c) {
    c->res->t_id = c->job->now();
    c->res->cpu_id = c->job->cpu();
}

static void reached_table(const struct rank_ctx* c) {
    c->res->t_ag = c->job->now();
    c->res->cpu_ag = c->job->cpu();
}

static int failf(struct rank_ctx* c, const char* what) {
    snprintf(c->res->why, sizeof c->res->why, "authfloor rank %d: %s%s%s", c->rank, what,
             errno ? ": " : "", errno ? strerror(errno) : "");
    return -1;
}

static void put32(uint8_t* p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t* p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int node_size(const struct af_job* j, int node) {
    const int rest = j->world - node * j->per_node;
    return rest < j->per_node ? rest : j->per_node;
}

static int nonce(uint8_t out[NONCE]) {
    size_t got = 0;
    while (got < NONCE) {
        const ssize_t r = getrandom(out + got, NONCE - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* One MAC under the step secret. The input is laid out in one buffer: one update, one digest. */
static void mac(struct rank_ctx* c, const uint8_t* in, size_t n, uint8_t out[MAC]) {
    hmac_sha256_update(&c->key, n, in);
    hmac_sha256_digest(&c->key, MAC, out);
}

static size_t put_label(uint8_t* p, const char* label) {
    const size_t n = strlen(label);
    memcpy(p, label, n);
    return n;
}

static size_t put_nonces(uint8_t* p, const uint8_t first[NONCE], const uint8_t second[NONCE]) {
    memcpy(p, first, NONCE);
    memcpy(p + NONCE, second, NONCE);
    return 2 * NONCE;
}

static size_t put_tag(struct rank_ctx* c, uint8_t* p) {
    p[0] = c->tag_len;
    memcpy(p + 1, c->tag, c->tag_len);
    return 1u + c->tag_len;
}

/* The hello's fields as the hello carries them: u32 rank, world, local rank, local world, node;
 * u8 tag length, u8 host length. */
struct hello {
    uint32_t f[5];
    uint8_t tag_len, host_len;
    const uint8_t* tag;
    const uint8_t* host;
    const uint8_t* cn;
    const uint8_t* mac;
};

static void client_proof(struct rank_ctx* c, const uint8_t sn[NONCE], const struct hello* h,
                         uint8_t out[MAC]) {
    uint8_t in[16 + 1 + MAX_TAG + 2 * NONCE + 20 + 1 + MAX_HOST];
    size_t n = put_label(in, "af client");
    in[n++] = h->tag_len;
    memcpy(in + n, h->tag, h->tag_len);
    n += h->tag_len;
    n += put_nonces(in + n, sn, h->cn);
    for (int i = 0; i < 5; ++i, n += 4) put32(in + n, h->f[i]);
    in[n++] = h->host_len;
    memcpy(in + n, h->host, h->host_len);
    n += h->host_len;
    mac(c, in, n, out);
}

/* The welcome's proof: over the id's digest when the welcome carries the id, else (NULL) under a
 * label of its own. */
static void server_proof(struct rank_ctx* c, const uint8_t cn[NONCE], const uint8_t sn[NONCE],
                         uint32_t client_rank, uint32_t server_rank, const uint8_t* host,
                         uint8_t host_len, const uint8_t* id_digest, uint8_t out[MAC]) {
    uint8_t in[16 + 1 + MAX_TAG + 2 * NONCE + 8 + 1 + MAX_HOST + SHA256_DIGEST_SIZE];
    size_t n = put_label(in, id_digest ? "af server" : "af welcome");
    n += put_tag(c, in + n);
    n += put_nonces(in + n, cn, sn);
    put32(in + n, client_rank);
    put32(in + n + 4, server_rank);
    n += 8;
    in[n++] = host_len;
    memcpy(in + n, host, host_len);
    n += host_len;
    if (id_digest) {
        memcpy(in + n, id_digest, SHA256_DIGEST_SIZE);
        n += SHA256_DIGEST_SIZE;
    }
    mac(c, in, n, out);
}

/* A message under one link's nonces: "af id" over the id's digest, "af down" over the table's
 * (computed once however many children get it), "af node" over nothing. */
static void link_mac(struct rank_ctx* c, const char* label, const uint8_t cn[NONCE],
                     const uint8_t sn[NONCE], const uint8_t* digest, uint8_t out[MAC]) {
    uint8_t in[8 + 2 * NONCE + SHA256_DIGEST_SIZE];
    size_t n = put_label(in, label);
    n += put_nonces(in + n, cn, sn);
    if (digest) {
        memcpy(in + n, digest, SHA256_DIGEST_SIZE);
        n += SHA256_DIGEST_SIZE;
    }
    mac(c, in, n, out);
}

/* The records going up: small, MACed directly. */
static void up_mac(struct rank_ctx* c, const uint8_t cn[NONCE], const uint8_t sn[NONCE],
                   const uint8_t* msg, size_t len, uint8_t out[MAC]) {
    uint8_t head[8 + 2 * NONCE];
    size_t n = put_label(head, "af up");
    n += put_nonces(head + n, cn, sn);
    hmac_sha256_update(&c->key, n, head);
    hmac_sha256_update(&c->key, len, msg);
    hmac_sha256_digest(&c->key, MAC, out);
}

static void sha256_of(const uint8_t* p, size_t n, uint8_t out[SHA256_DIGEST_SIZE]) {
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, n, p);
    sha256_digest(&h, SHA256_DIGEST_SIZE, out);
}

/* ---- sockets ------------------------------------------------------------------------------ */

void af_local_name(const struct af_job* job, int node, char out[40]) {
    struct sha256_ctx h;
    uint8_t d[SHA256_DIGEST_SIZE];
    uint8_t tail[8];
    const size_t tag_len = strnlen(job->step_tag, MAX_TAG);
    sha256_init(&h);
    sha256_update(&h, 14, (const uint8_t*)"af local name");
    sha256_update(&h, tag_len, (const uint8_t*)job->step_tag);
    sha256_update(&h, 1, (const uint8_t*)"");
    sha256_update(&h, job->secret_len, job->secret);
    put32(tail, job->port);
    put32(tail + 4, (uint32_t)node);
    sha256_update(&h, sizeof tail, tail);
    sha256_digest(&h, sizeof d, d);
    static const char hex[] = "0123456789abcdef";
    memcpy(out, "afl-", 4);
    for (int i = 0; i < 16; ++i) {
        out[4 + 2 * i] = hex[d[i] >> 4];
        out[5 + 2 * i] = hex[d[i] & 15];
    }
    out[36] = '\0';
}

static socklen_t abstract_addr(const char* name, struct sockaddr_un* un) {
    memset(un, 0, sizeof *un);
    un->sun_family = AF_UNIX;
    const size_t n = strlen(name);
    memcpy(un->sun_path + 1, name, n);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int af_listen_local(const char* name) {
    struct sockaddr_un un;
    const socklen_t len = abstract_addr(name, &un);
    const int l = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l < 0) return -1;
    if (bind(l, (struct sockaddr*)&un, len) != 0 || listen(l, 65535) != 0) {
        close(l);
        return -1;
    }
    return l;
}

static int listen_tcp(uint16_t port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (l < 0) return -1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(l, (struct sockaddr*)&a, sizeof a) != 0 || listen(l, 65535) != 0) {
        close(l);
        return -1;
    }
    return l;
}

/* The peer on a node-local socket runs as this user (a hello or a challenge goes to no one
 * else). */
static int peer_is_us(struct rank_ctx* c, int fd) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof cred &&
           cred.uid == c->uid;
}

/* One connect attempt: a connected blocking socket, or -1 with errno. */
static int connect_once(struct rank_ctx* c, int local, int node) {
    if (local) {
        char name[40];
        struct sockaddr_un un;
        af_local_name(c->job, node, name);
        const socklen_t len = abstract_addr(name, &un);
        const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        if (connect(fd, (struct sockaddr*)&un, len) != 0) {
            const int err = errno;
            close(fd);
            errno = err;
            return -1;
        }
        if (!peer_is_us(c, fd)) {
            close(fd);
            errno = EPERM;
            return -1;
        }
        return fd;
    }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(c->job->port);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (fd < 0) return -1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
        const int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* The library's retry pauses: from 1 ms (a local socket: 250 us), doubling to 1 s (8 ms), never
 * more than a quarter of the time waited so far, with +-50 % jitter. In microseconds. */
struct backoff {
    double start;
    long first, next, cap;
};

static void backoff_init(struct backoff* b, int local) {
    b->start = now_s();
    b->first = local ? 250 : 1000;
    b->next = b->first;
    b->cap = local ? 8000 : 1000000;
}

static long backoff_pause(struct backoff* b, unsigned* seed) {
    const long waited = (long)((now_s() - b->start) * 1e6);
    long p = b->next < waited / 4 ? b->next : waited / 4;
    if (p < b->first) p = b->first;
    b->next = b->next * 2 < b->cap ? b->next * 2 : b->cap;
    return (long)((double)p * (0.5 + (double)rand_r(seed) / RAND_MAX));
}

static int write_all(int fd, const void* p, size_t n) {
    const uint8_t* b = p;
    while (n > 0) {
        const ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int writev_all(int fd, const void* a, size_t an, const void* b, size_t bn) {
    struct iovec iov[2] = {{(void*)a, an}, {(void*)b, bn}};
    int k = 0;
    while (k < 2) {
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = iov + k;
        m.msg_iovlen = (size_t)(2 - k);
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        while (k < 2 && (size_t)w >= iov[k].iov_len) w -= (ssize_t)iov[k++].iov_len;
        if (k < 2) {
            iov[k].iov_base = (uint8_t*)iov[k].iov_base + w;
            iov[k].iov_len -= (size_t)w;
        }
    }
    return 0;
}

static int read_exact(int fd, void* p, size_t n) {
    uint8_t* b = p;
    while (n > 0) {
        const ssize_t r = recv(fd, b, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = ECONNRESET;
            return -1;
        }
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

/* ---- messages ----------------------------------------------------------------------------- */

/* This rank's hello, proven against the server's nonce `sn`; returns its length. */
static size_t make_hello(struct rank_ctx* c, const uint8_t sn[NONCE], const uint8_t cn[NONCE],
                         uint8_t out[HELLO_MAX]) {
    struct hello h = {0};
    const int lw = node_size(c->job, c->node);
    h.f[0] = (uint32_t)c->rank;
    h.f[1] = (uint32_t)c->job->world;
    h.f[2] = (uint32_t)c->local_rank;
    h.f[3] = (uint32_t)lw;
    h.f[4] = (uint32_t)c->node;
    h.tag_len = c->tag_len;
    h.host_len = c->host_len;
    h.tag = c->tag;
    h.host = (const uint8_t*)c->host;
    h.cn = cn;
    size_t n = 0;
    for (int i = 0; i < 5; ++i, n += 4) put32(out + n, h.f[i]);
    out[n++] = h.tag_len;
    out[n++] = h.host_len;
    memcpy(out + n, h.tag, h.tag_len);
    n += h.tag_len;
    memcpy(out + n, h.host, h.host_len);
    n += h.host_len;
    memcpy(out + n, cn, NONCE);
    n += NONCE;
    client_proof(c, sn, &h, out + n);
    return n + MAC;
}

/* Bytes of a whole hello at the front of `b` (`have` bytes), 0 if more are needed, -1 if it
 * cannot be one. */
static long hello_size(const uint8_t* b, size_t have) {
    if (have < HELLO_FIXED) return 0;
    if (b[20] > MAX_TAG || b[21] > MAX_HOST) return -1;
    const size_t n = HELLO_FIXED + (size_t)b[20] + b[21] + NONCE + MAC;
    return have >= n ? (long)n : 0;
}

static void parse_hello(const uint8_t* b, struct hello* h) {
    for (int i = 0; i < 5; ++i) h->f[i] = get32(b + (size_t)4 * i);
    h->tag_len = b[20];
    h->host_len = b[21];
    h->tag = b + HELLO_FIXED;
    h->host = h->tag + h->tag_len;
    h->cn = h->host + h->host_len;
    h->mac = h->cn + NONCE;
}

static size_t make_welcome(struct rank_ctx* c, const uint8_t cn[NONCE], const uint8_t sn[NONCE],
                           uint32_t client_rank, const uint8_t* id,
                           const uint8_t id_digest[SHA256_DIGEST_SIZE], uint8_t out[WELCOME_MAX]) {
    put32(out, (uint32_t)c->rank);
    out[4] = c->host_len;
    size_t n = WELCOME_FIXED;
    memcpy(out + n, c->host, c->host_len);
    n += c->host_len;
    if (id) {
        memcpy(out + n, id, AF_ID_BYTES);
        n += AF_ID_BYTES;
    }
    server_proof(c, cn, sn, client_rank, (uint32_t)c->rank, (const uint8_t*)c->host, c->host_len,
                 id ? id_digest : NULL, out + n);
    return n + MAC;
}

/* The id in a message of its own (barrier): id | MAC. */
static void make_id_msg(struct rank_ctx* c, const uint8_t cn[NONCE], const uint8_t sn[NONCE],
                        const uint8_t* id, const uint8_t id_digest[SHA256_DIGEST_SIZE],
                        uint8_t out[AF_ID_BYTES + MAC]) {
    memcpy(out, id, AF_ID_BYTES);
    link_mac(c, "af id", cn, sn, id_digest, out + AF_ID_BYTES);
}

static int check_id_msg(struct rank_ctx* c, const uint8_t* b, const uint8_t cn[NONCE],
                        const uint8_t sn[NONCE], uint8_t id[AF_ID_BYTES]) {
    uint8_t digest[SHA256_DIGEST_SIZE], want[MAC];
    sha256_of(b, AF_ID_BYTES, digest);
    link_mac(c, "af id", cn, sn, digest, want);
    if (!memeql_sec(want, b + AF_ID_BYTES, MAC)) return -1;
    memcpy(id, b, AF_ID_BYTES);
    return 0;
}

/* Checks a welcome (`n` bytes, complete) against this connection's nonces; copies the id. */
/* Checks a welcome (`n` bytes, complete) against this connection's nonces; copies the id when it
 * carries one (id != NULL). */
static int check_welcome(struct rank_ctx* c, const uint8_t* b, size_t n, const uint8_t cn[NONCE],
                         const uint8_t sn[NONCE], uint8_t* id) {
    const uint8_t host_len = b[4];
    const size_t id_bytes = id ? AF_ID_BYTES : 0;
    if (host_len > MAX_HOST || n != (size_t)WELCOME_FIXED + host_len + id_bytes + MAC) return -1;
    const uint8_t* host = b + WELCOME_FIXED;
    const uint8_t* got_id = host + host_len;
    uint8_t digest[SHA256_DIGEST_SIZE], want[MAC];
    if (id) sha256_of(got_id, AF_ID_BYTES, digest);
    server_proof(c, cn, sn, (uint32_t)c->rank, get32(b), host, host_len, id ? digest : NULL, want);
    if (!memeql_sec(want, got_id + id_bytes, MAC)) return -1;
    if (id) memcpy(id, got_id, AF_ID_BYTES);
    return 0;
}

static long welcome_size(const uint8_t* b, size_t have, int with_id) {
    if (have < WELCOME_FIXED) return 0;
    if (b[4] > MAX_HOST) return -1;
    const size_t n = (size_t)WELCOME_FIXED + b[4] + (with_id ? AF_ID_BYTES : 0) + MAC;
    return have >= n ? (long)n : 0;
}

/* ---- a rank that only connects: a star's rank > 0, a node's local rank > 0 ------------------ */

static int join_as_client(struct rank_ctx* c, int local, int* fd_out, uint8_t cn[NONCE],
                          uint8_t sn[NONCE]) {
    struct backoff b;
    backoff_init(&b, local);
    int fd;
    for (;;) {
        fd = connect_once(c, local, c->node);
        if (fd >= 0) break;
        if (errno != ECONNREFUSED && errno != ENOENT && errno != EAGAIN && errno != EPERM)
            return failf(c, "connect");
        if (now_s() > c->deadline) return failf(c, "connect: deadline");
        usleep((useconds_t)backoff_pause(&b, &c->seed));
    }
    uint8_t hello[HELLO_MAX], w[WELCOME_MAX];
    if (read_exact(fd, sn, NONCE) != 0) return failf(c, "read challenge");
    if (nonce(cn) != 0) return failf(c, "getrandom");
    const size_t hn = make_hello(c, sn, cn, hello);
    if (write_all(fd, hello, hn) != 0) return failf(c, "write hello");
    const int with_id = !c->job->barrier;
    size_t have = 0;
    long need = 0;
    while ((need = welcome_size(w, have, with_id)) == 0) {
        const ssize_t r = recv(fd, w + have, sizeof w - have, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return failf(c, "read welcome");
        have += (size_t)r;
    }
    errno = 0;
    if (need < 0 || check_welcome(c, w, (size_t)need, cn, sn, with_id ? c->res->id : NULL) != 0)
        return failf(c, "the welcome's proof does not verify");
    if (!with_id) {
        /* The id once the whole world is in; it may have come with the welcome's bytes. */
        uint8_t m[AF_ID_BYTES + MAC];
        const size_t extra = have - (size_t)need;
        memcpy(m, w + need, extra);
        if (read_exact(fd, m + extra, sizeof m - extra) != 0) return failf(c, "read id");
        errno = 0;
        if (check_id_msg(c, m, cn, sn, c->res->id) != 0)
            return failf(c, "the id's MAC does not verify");
    }
    *fd_out = fd;
    return 0;
}

static int read_down(struct rank_ctx* c, int fd, const uint8_t cn[NONCE], const uint8_t sn[NONCE],
                     uint8_t* table, size_t table_bytes) {
    uint8_t got[MAC], want[MAC], digest[SHA256_DIGEST_SIZE];
    if (read_exact(fd, table, table_bytes) != 0 || read_exact(fd, got, MAC) != 0)
        return failf(c, "read table");
    sha256_of(table, table_bytes, digest);
    link_mac(c, "af down", cn, sn, digest, want);
    errno = 0;
    if (!memeql_sec(want, got, MAC)) return failf(c, "the table's MAC does not verify");
    return 0;
}

static int run_client(struct rank_ctx* c, int local) {
    int fd = -1;
    uint8_t cn[NONCE], sn[NONCE];
    if (join_as_client(c, local, &fd, cn, sn) != 0) return -1;
    reached_id(c);
    uint8_t up[4 + UP_ITEM + MAC];
    put32(up, 1);
    put32(up + 4, (uint32_t)c->rank);
    c->job->record_of(c->rank, up + 8);
    up_mac(c, cn, sn, up, 4 + UP_ITEM, up + 4 + UP_ITEM);
    if (write_all(fd, up, sizeof up) != 0) return failf(c, "write record");
    const size_t tb = (size_t)c->job->world * AF_RECORD_BYTES;
    c->res->table = malloc(tb);
    if (!c->res->table) return failf(c, "malloc");
    if (read_down(c, fd, cn, sn, c->res->table, tb) != 0) return -1;
    reached_table(c);
    return 0;
}

/* ---- a rank that serves: rank 0, and a node's leader ---------------------------------------- */

/* A child's connection: challenged, proven (waiting for the id to welcome it with), welcomed;
 * with job->barrier a leader's link at rank 0 then owes its node's completion (C_NODE); then its
 * records come up (C_UP). */
enum { C_CHALLENGED, C_PROVEN, C_NODE, C_WELCOMED, C_UP, C_CLOSED };

struct conn {
    int fd;
    int state;
    int local;
    uint32_t rank;
    uint32_t records; /* how many records its up message brings */
    uint8_t sn[NONCE], cn[NONCE];
    size_t have;
    uint8_t* buf;
};

/* The leader's link to rank 0: P_WELCOMED and P_ID only with job->barrier. */
enum { P_CONNECT, P_CHALLENGE, P_WELCOME, P_WELCOMED, P_ID, P_HAVE_ID, P_DOWN };

struct server {
    struct rank_ctx* c;
    int barrier;
    int ep;
    int tcp_l, local_l;
    struct conn* conns;
    int nconns, cap;
    uint8_t* pool;
    size_t bufsize;
    char* seen; /* by rank: already joined here */
    int expected, welcomed;
    int nodes_expected, nodes_in; /* barrier, rank 0: leaders whose node is complete */
    int records_expected, records_got;
    uint8_t* table;
    int have_id;
    uint8_t id_digest[SHA256_DIGEST_SIZE];
    /* leader only */
    int pfd, pstate;
    struct backoff pb;
    double next_try;
    uint8_t psn[NONCE], pcn[NONCE];
    uint8_t pbuf[WELCOME_MAX];
    size_t phave;
    uint8_t* down; /* table + MAC from rank 0 */
};

static int epoll_add(int ep, int fd, uint64_t tag) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

enum { TAG_TCP_L = 1, TAG_LOCAL_L = 2, TAG_PARENT = 3, TAG_CONN = 16 };

static void drop(struct server* s, struct conn* k) {
    epoll_ctl(s->ep, EPOLL_CTL_DEL, k->fd, NULL);
    close(k->fd);
    k->state = C_CLOSED;
}

static void accept_all(struct server* s, int l, int local) {
    struct rank_ctx* c = s->c;
    for (;;) {
        const int fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) return;
        /* Not even a challenge for another user's process on the node-local socket. */
        if ((local && !peer_is_us(c, fd)) || s->nconns >= s->cap) {
            close(fd);
            continue;
        }
        if (!local) {
            const int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        struct conn* k = &s->conns[s->nconns];
        memset(k, 0, sizeof *k);
        k->fd = fd;
        k->local = local;
        k->buf = s->pool + (size_t)s->nconns * s->bufsize;
        if (nonce(k->sn) != 0 || write_all(fd, k->sn, NONCE) != 0) {
            close(fd);
            continue;
        }
        epoll_add(s->ep, fd, TAG_CONN + (uint64_t)s->nconns);
        ++s->nconns;
    }
}

static void welcome(struct server* s, struct conn* k) {
    uint8_t w[WELCOME_MAX];
    const size_t n = make_welcome(s->c, k->cn, k->sn, k->rank, s->barrier ? NULL : s->c->res->id,
                                  s->id_digest, w);
    if (write_all(k->fd, w, n) != 0) {
        drop(s, k);
        return;
    }
    /* A leader of the two-level shape owes rank 0 its node's completion first. */
    k->state = s->barrier && !k->local && s->c->job->per_node > 1 ? C_NODE : C_WELCOMED;
    ++s->welcomed;
}

/* Barrier: the id to every child, each under its link's nonces. */
static int send_id_all(struct server* s) {
    for (int i = 0; i < s->nconns; ++i) {
        struct conn* k = &s->conns[i];
        if (k->state != C_WELCOMED) continue;
        uint8_t m[AF_ID_BYTES + MAC];
        make_id_msg(s->c, k->cn, k->sn, s->c->res->id, s->id_digest, m);
        if (write_all(k->fd, m, sizeof m) != 0) return failf(s->c, "write id");
    }
    return 0;
}

/* A hello's claims: this step, this world, a rank this server serves, not seen before. */
static int hello_fits(struct server* s, const struct conn* k, const struct hello* h) {
    struct rank_ctx* c = s->c;
    const struct af_job* j = c->job;
    if (h->tag_len != c->tag_len || memcmp(h->tag, c->tag, c->tag_len) != 0) return 0;
    uint8_t want[MAC];
    client_proof(c, k->sn, h, want);
    if (!memeql_sec(want, h->mac, MAC)) return 0;
    const uint32_t rank = h->f[0], lrank = h->f[2], lworld = h->f[3], node = h->f[4];
    if (h->f[1] != (uint32_t)j->world || rank >= (uint32_t)j->world || s->seen[rank]) return 0;
    if (node >= (uint32_t)c->nodes || lworld != (uint32_t)node_size(j, (int)node)) return 0;
    if (rank != node * (uint32_t)j->per_node + lrank) return 0;
    if (k->local) return node == (uint32_t)c->node && lrank > 0 && lrank < lworld;
    return c->rank == 0 && lrank == 0 && node > 0;
}

static void on_hello(struct server* s, struct conn* k) {
    const long n = hello_size(k->buf, k->have);
    if (n == 0) return;
    struct hello h = {0};
    if (n > 0) parse_hello(k->buf, &h);
    if (n < 0 || (size_t)n != k->have || !hello_fits(s, k, &h)) {
        drop(s, k);
        return;
    }
    memcpy(k->cn, h.cn, NONCE);
    k->rank = h.f[0];
    k->records = k->local ? 1 : h.f[3];
    s->seen[k->rank] = 1;
    k->have = 0;
    k->state = C_PROVEN;
    if (s->have_id || s->barrier) welcome(s, k);
}

static int on_up(struct server* s, struct conn* k) {
    const size_t n = 4 + (size_t)k->records * UP_ITEM + MAC;
    if (k->have < n) return 0;
    uint8_t want[MAC];
    up_mac(s->c, k->cn, k->sn, k->buf, n - MAC, want);
    if (k->have != n || get32(k->buf) != k->records || !memeql_sec(want, k->buf + n - MAC, MAC))
        return -1;
    /* Its records are its own rank's, or its node's ranks (a leader's). */
    for (uint32_t i = 0; i < k->records; ++i) {
        const uint8_t* item = k->buf + 4 + (size_t)i * UP_ITEM;
        const uint32_t r = get32(item);
        if (r != k->rank + i) return -1;
        memcpy(s->table + (size_t)r * AF_RECORD_BYTES, item + 4, AF_RECORD_BYTES);
    }
    s->records_got += (int)k->records;
    k->state = C_UP;
    return 0;
}

static void on_conn(struct server* s, struct conn* k) {
    if (k->state == C_CLOSED) return;
    const ssize_t r = recv(k->fd, k->buf + k->have, s->bufsize - k->have, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (r <= 0) {
        drop(s, k);
        return;
    }
    k->have += (size_t)r;
    if (k->state == C_CHALLENGED) {
        on_hello(s, k);
    } else if (k->state == C_NODE) {
        if (k->have < MAC) return;
        uint8_t want[MAC];
        link_mac(s->c, "af node", k->cn, k->sn, NULL, want);
        if (k->have != MAC || !memeql_sec(want, k->buf, MAC)) {
            drop(s, k);
            return;
        }
        k->have = 0;
        k->state = C_WELCOMED;
        ++s->nodes_in;
    } else if (k->state == C_WELCOMED) {
        if (on_up(s, k) != 0) drop(s, k);
    } else if (k->have >= s->bufsize) {
        drop(s, k); /* a proven peer that talks out of turn */
    }
}

/* Leader: its own join to rank 0, as far as the bytes in hand allow. */
static int parent_advance(struct server* s) {
    struct rank_ctx* c = s->c;
    for (;;) {
        if (s->pstate == P_CHALLENGE && s->phave >= NONCE) {
            uint8_t hello[HELLO_MAX];
            memcpy(s->psn, s->pbuf, NONCE);
            s->phave -= NONCE;
            memmove(s->pbuf, s->pbuf + NONCE, s->phave);
            if (nonce(s->pcn) != 0) return failf(c, "getrandom");
            const size_t hn = make_hello(c, s->psn, s->pcn, hello);
            if (write_all(s->pfd, hello, hn) != 0) return failf(c, "write hello");
            s->pstate = P_WELCOME;
            continue;
        }
        if (s->pstate == P_WELCOME) {
            const long n = welcome_size(s->pbuf, s->phave, !s->barrier);
            if (n == 0) return 0;
            errno = 0;
            if (n < 0 || check_welcome(c, s->pbuf, (size_t)n, s->pcn, s->psn,
                                       s->barrier ? NULL : c->res->id) != 0)
                return failf(c, "rank 0's welcome does not verify");
            s->phave -= (size_t)n;
            memmove(s->pbuf, s->pbuf + n, s->phave);
            if (s->barrier) {
                s->pstate = P_WELCOMED;
                return 0;
            }
            s->pstate = P_HAVE_ID;
            s->have_id = 1;
            sha256_of(c->res->id, AF_ID_BYTES, s->id_digest);
            for (int i = 0; i < s->nconns; ++i)
                if (s->conns[i].state == C_PROVEN) welcome(s, &s->conns[i]);
            return 0;
        }
        if (s->pstate == P_ID && s->phave >= AF_ID_BYTES + MAC) {
            errno = 0;
            if (s->phave != AF_ID_BYTES + MAC ||
                check_id_msg(c, s->pbuf, s->pcn, s->psn, c->res->id) != 0)
                return failf(c, "rank 0's id does not verify");
            s->phave = 0;
            s->pstate = P_HAVE_ID;
            s->have_id = 1;
            sha256_of(c->res->id, AF_ID_BYTES, s->id_digest);
            return 0;
        }
        return 0;
    }
}

static int parent_step(struct server* s) {
    struct rank_ctx* c = s->c;
    if (s->pstate == P_CONNECT) {
        if (now_s() < s->next_try) return 0;
        const int fd = connect_once(c, 0, 0);
        if (fd < 0) {
            if (errno != ECONNREFUSED) return failf(c, "connect to rank 0");
            s->next_try = now_s() + (double)backoff_pause(&s->pb, &c->seed) * 1e-6;
            return 0;
        }
        s->pfd = fd;
        s->pstate = P_CHALLENGE;
        epoll_add(s->ep, fd, TAG_PARENT);
        return 0;
    }
    const ssize_t r = recv(s->pfd, s->pbuf + s->phave, sizeof s->pbuf - s->phave, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return 0;
    if (r <= 0) return failf(c, "rank 0 closed the connection");
    s->phave += (size_t)r;
    return parent_advance(s);
}

static int send_down(struct server* s, const uint8_t digest[SHA256_DIGEST_SIZE]) {
    const size_t tb = (size_t)s->c->job->world * AF_RECORD_BYTES;
    for (int i = 0; i < s->nconns; ++i) {
        struct conn* k = &s->conns[i];
        if (k->state != C_UP) continue;
        uint8_t m[MAC];
        link_mac(s->c, "af down", k->cn, k->sn, digest, m);
        if (writev_all(k->fd, s->table, tb, m, MAC) != 0) return failf(s->c, "write table");
    }
    return 0;
}

/* Whether this server's part of the id's distribution is done; sends what it owes on the way. */
static int id_step(struct server* s, int leader, int* done) {
    struct rank_ctx* c = s->c;
    if (!s->barrier) {
        *done = s->have_id && s->welcomed == s->expected;
        return 0;
    }
    if (leader) {
        if (s->pstate == P_WELCOMED && s->welcomed == s->expected) {
            /* The node is complete: say so to rank 0, then wait for the id. */
            uint8_t m[MAC];
            link_mac(c, "af node", s->pcn, s->psn, NULL, m);
            if (write_all(s->pfd, m, MAC) != 0) return failf(c, "write node");
            s->pstate = P_ID;
            if (parent_advance(s) != 0) return -1;
        }
        if (!s->have_id) return 0;
    } else if (s->welcomed < s->expected || s->nodes_in < s->nodes_expected) {
        return 0;
    }
    if (send_id_all(s) != 0) return -1;
    *done = 1;
    return 0;
}

static int run_server(struct rank_ctx* c) {
    const struct af_job* j = c->job;
    struct server s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.barrier = j->barrier;
    s.tcp_l = s.local_l = s.pfd = -1;
    const int lw = node_size(j, c->node);
    const int leader = c->rank != 0;
    const int tcp_children = leader ? 0 : c->nodes - 1;
    s.expected = tcp_children + (lw - 1);
    s.nodes_expected = j->per_node > 1 ? tcp_children : 0;
    s.records_expected = leader ? lw - 1 : j->world - 1;
    s.cap = s.expected + 16;
    s.bufsize = HELLO_MAX;
    if (!leader && j->per_node > 1 && s.bufsize < 4 + (size_t)j->per_node * UP_ITEM + MAC)
        s.bufsize = 4 + (size_t)j->per_node * UP_ITEM + MAC;
    /* Listening comes first: every child retries until it does. */
    s.ep = epoll_create1(EPOLL_CLOEXEC);
    if (lw > 1) {
        if (j->local_listeners) {
            s.local_l = j->local_listeners[c->node];
        } else {
            char name[40];
            af_local_name(j, c->node, name);
            s.local_l = af_listen_local(name);
        }
        if (s.local_l < 0) return failf(c, "listen on the local socket");
        epoll_add(s.ep, s.local_l, TAG_LOCAL_L);
    }
    if (tcp_children > 0) {
        s.tcp_l = j->tcp_listener >= 0 ? j->tcp_listener : listen_tcp(j->port);
        if (s.tcp_l < 0) return failf(c, "listen on TCP");
        epoll_add(s.ep, s.tcp_l, TAG_TCP_L);
    }
    s.conns = calloc((size_t)s.cap, sizeof *s.conns);
    s.pool = malloc((size_t)s.cap * s.bufsize);
    s.seen = calloc((size_t)j->world, 1);
    s.table = c->res->table = malloc((size_t)j->world * AF_RECORD_BYTES);
    if (!s.conns || !s.pool || !s.seen || !s.table) return failf(c, "malloc");
    c->job->record_of(c->rank, s.table + (size_t)c->rank * AF_RECORD_BYTES);
    if (leader) {
        s.pstate = P_CONNECT;
        backoff_init(&s.pb, 0);
        s.next_try = 0;
        s.down = malloc((size_t)j->world * AF_RECORD_BYTES + MAC);
        if (!s.down) return failf(c, "malloc");
        if (parent_step(&s) != 0) return -1;
    } else {
        s.have_id = 1;
        memcpy(c->res->id, j->id, AF_ID_BYTES);
        sha256_of(c->res->id, AF_ID_BYTES, s.id_digest);
    }
    int id_done = 0, up_sent = 0;
    size_t down_have = 0;
    const size_t tb = (size_t)j->world * AF_RECORD_BYTES;
    for (;;) {
        if (!id_done) {
            if (id_step(&s, leader, &id_done) != 0) return -1;
            if (id_done) {
                reached_id(c);
            }
        }
        if (id_done && s.records_got == s.records_expected) {
            if (!leader) break;
            if (!up_sent) {
                /* The node's records, its own first, under the link to rank 0. */
                const size_t n = 4 + (size_t)lw * UP_ITEM;
                uint8_t* up = malloc(n + MAC);
                if (!up) return failf(c, "malloc");
                put32(up, (uint32_t)lw);
                for (int i = 0; i < lw; ++i) {
                    put32(up + 4 + (size_t)i * UP_ITEM, (uint32_t)(c->rank + i));
                    memcpy(up + 8 + (size_t)i * UP_ITEM,
                           s.table + (size_t)(c->rank + i) * AF_RECORD_BYTES, AF_RECORD_BYTES);
                }
                up_mac(c, s.pcn, s.psn, up, n, up + n);
                if (write_all(s.pfd, up, n + MAC) != 0) return failf(c, "write records");
                free(up);
                up_sent = 1;
                s.pstate = P_DOWN;
            }
        }
        if (now_s() > c->deadline) {
            errno = 0;
            return failf(c, "deadline");
        }
        int timeout = 1000;
        if (leader && s.pstate == P_CONNECT) {
            const double wait = s.next_try - now_s();
            timeout = wait <= 0 ? 0 : (int)(wait * 1e3) + 1;
        }
        struct epoll_event ev[64];
        const int k = epoll_wait(s.ep, ev, 64, timeout);
        if (leader && s.pstate == P_CONNECT && parent_step(&s) != 0) return -1;
        for (int i = 0; i < k; ++i) {
            const uint64_t tag = ev[i].data.u64;
            if (tag == TAG_TCP_L || tag == TAG_LOCAL_L) {
                accept_all(&s, tag == TAG_TCP_L ? s.tcp_l : s.local_l, tag == TAG_LOCAL_L);
            } else if (tag == TAG_PARENT) {
                if (s.pstate == P_DOWN) {
                    /* The table and its MAC from rank 0, as they come. */
                    const ssize_t r =
                        recv(s.pfd, s.down + down_have, tb + MAC - down_have, MSG_DONTWAIT);
                    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                    if (r <= 0) return failf(c, "read table");
                    down_have += (size_t)r;
                    if (down_have == tb + MAC) {
                        uint8_t digest[SHA256_DIGEST_SIZE], want[MAC];
                        sha256_of(s.down, tb, digest);
                        link_mac(c, "af down", s.pcn, s.psn, digest, want);
                        errno = 0;
                        if (!memeql_sec(want, s.down + tb, MAC))
                            return failf(c, "rank 0's table does not verify");
                        memcpy(s.table, s.down, tb);
                        if (send_down(&s, digest) != 0) return -1;
                        reached_table(c);
                        return 0;
                    }
                } else if (s.pstate == P_HAVE_ID || s.pstate == P_WELCOMED) {
                    /* Rank 0 says nothing in these states: an event here is its end. */
                    char x;
                    if (recv(s.pfd, &x, 1, MSG_DONTWAIT | MSG_PEEK) == 0)
                        return failf(c, "rank 0 closed the connection");
                } else if (parent_step(&s) != 0) {
                    return -1;
                }
            } else {
                on_conn(&s, &s.conns[tag - TAG_CONN]);
            }
        }
    }
    /* Rank 0: every record is in. */
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_of(s.table, tb, digest);
    if (send_down(&s, digest) != 0) return -1;
    reached_table(c);
    return 0;
}

int af_run_rank(const struct af_job* job, int rank, struct af_result* res) {
    struct rank_ctx c;
    memset(&c, 0, sizeof c);
    c.job = job;
    c.res = res;
    c.rank = rank;
    c.node = rank / job->per_node;
    c.local_rank = rank % job->per_node;
    c.nodes = (job->world + job->per_node - 1) / job->per_node;
    c.deadline = now_s() + DEADLINE_S;
    c.seed = (unsigned)rank * 2654435761u ^ (unsigned)getpid();
    c.uid = geteuid();
    res->why[0] = '\0';
    /* The step secret, keyed once for every MAC of this rank. */
    hmac_sha256_set_key(&c.key, job->secret_len, job->secret);
    c.tag_len = (uint8_t)strnlen(job->step_tag, MAX_TAG);
    memcpy(c.tag, job->step_tag, c.tag_len);
    c.host_len = (uint8_t)snprintf(c.host, sizeof c.host, "node%d", c.node);
    const int serves = rank == 0 || (job->per_node > 1 && c.local_rank == 0);
    if (!serves) return run_client(&c, job->per_node > 1);
    return run_server(&c);
}
