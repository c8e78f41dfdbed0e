// SPDX-License-Identifier: Apache-2.0
// libcrypto_setup: where a process's first HMAC-SHA256 spends its CPU under OpenSSL 3, and what
// one HMAC costs afterwards through each API. One fresh process per run of `setup`, since the
// set-up happens once per process.
//
//   built as build-bench/bench/libcrypto_setup (-DSDDP_BUILD_BENCH=ON, OpenSSL 3), or by hand:
//   cc -O2 bench/micro/libcrypto_setup.c -lcrypto -o /tmp/libcrypto_setup
//   for i in 1 2 3 4 5; do /tmp/libcrypto_setup setup; done      # as the library does it
//   /tmp/libcrypto_setup setup noconf   # OPENSSL_INIT_NO_LOAD_CONFIG (ignores the site's config)
//   /tmp/libcrypto_setup setup nostrings noadd  # process-wide opt-outs (see below)
//   /tmp/libcrypto_setup per-mac
//
// setup prints CPU ms of: OPENSSL_init_crypto (config file, error strings, legacy name tables),
// the explicit fetches of HMAC and SHA256 (provider activation, algorithm tables), the first
// HMAC. per-mac prints µs per 96-byte HMAC-SHA256 (wall clock, 200000 each).
// Figures, and why the opt-outs were not taken: docs/performance-history.md, "libcrypto's
// one-time set-up".
#define OPENSSL_SUPPRESS_DEPRECATED  // HMAC_CTX is timed for comparison only
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double ms(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int has(int argc, char** argv, const char* word) {
    for (int i = 2; i < argc; ++i)
        if (strcmp(argv[i], word) == 0) return 1;
    return 0;
}

static unsigned char key[32] = {1}, msg[96] = {2}, out[64];

static int setup(int argc, char** argv) {
    uint64_t opts =
        has(argc, argv, "noconf") ? OPENSSL_INIT_NO_LOAD_CONFIG : OPENSSL_INIT_LOAD_CONFIG;
    if (has(argc, argv, "nostrings")) opts |= OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS;
    if (has(argc, argv, "noadd"))
        opts |= OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS;
    const double t0 = ms(CLOCK_PROCESS_CPUTIME_ID);
    if (!OPENSSL_init_crypto(opts, NULL)) return 1;
    const double t1 = ms(CLOCK_PROCESS_CPUTIME_ID);
    EVP_MD* md = EVP_MD_fetch(NULL, "SHA256", NULL);
    EVP_MAC* mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (md == NULL || mac == NULL) return 1;
    const double t2 = ms(CLOCK_PROCESS_CPUTIME_ID);
    char digest[] = "SHA256";
    const OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                            OSSL_PARAM_construct_end()};
    EVP_MAC_CTX* c = EVP_MAC_CTX_new(mac);
    size_t len = 0;
    if (c == NULL || !EVP_MAC_init(c, key, sizeof key, p) || !EVP_MAC_update(c, msg, sizeof msg) ||
        !EVP_MAC_final(c, out, &len, sizeof out))
        return 1;
    const double t3 = ms(CLOCK_PROCESS_CPUTIME_ID);
    printf("setup init_ms=%.3f fetch_ms=%.3f first_mac_ms=%.3f total_ms=%.3f\n", t1 - t0, t2 - t1,
           t3 - t2, t3 - t0);
    return 0;
}

#define N 200000
#define TIMED(label, body)                                                             \
    do {                                                                               \
        const double s = ms(CLOCK_MONOTONIC);                                          \
        for (int i = 0; i < N; ++i) {                                                  \
            body;                                                                      \
        }                                                                              \
        printf("per-mac %-34s %.2f us\n", label, (ms(CLOCK_MONOTONIC) - s) * 1e3 / N); \
    } while (0)

static int per_mac(void) {
    EVP_MAC* mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MD* md = EVP_MD_fetch(NULL, "SHA256", NULL);
    char d[] = "SHA256";
    const OSSL_PARAM p[] = {OSSL_PARAM_construct_utf8_string("digest", d, 0),
                            OSSL_PARAM_construct_end()};
    size_t len;
    unsigned int ul;
    TIMED("EVP_MAC new+init (the library)", {
        EVP_MAC_CTX* c = EVP_MAC_CTX_new(mac);
        EVP_MAC_init(c, key, 32, p);
        EVP_MAC_update(c, msg, 96);
        EVP_MAC_final(c, out, &len, 64);
        EVP_MAC_CTX_free(c);
    });
    EVP_MAC_CTX* keyed = EVP_MAC_CTX_new(mac);
    EVP_MAC_init(keyed, key, 32, p);
    TIMED("EVP_MAC_CTX_dup of a keyed ctx", {
        EVP_MAC_CTX* c = EVP_MAC_CTX_dup(keyed);
        EVP_MAC_update(c, msg, 96);
        EVP_MAC_final(c, out, &len, 64);
        EVP_MAC_CTX_free(c);
    });
    EVP_PKEY* k = EVP_PKEY_new_raw_private_key(EVP_PKEY_HMAC, NULL, key, 32);
    TIMED("EVP_PKEY raw key + DigestSign", {
        EVP_MD_CTX* c = EVP_MD_CTX_new();
        EVP_DigestSignInit(c, NULL, md, NULL, k);
        EVP_DigestSignUpdate(c, msg, 96);
        len = 64;
        EVP_DigestSignFinal(c, out, &len);
        EVP_MD_CTX_free(c);
    });
    TIMED("HMAC_CTX (1.1.1 API)", {
        HMAC_CTX* c = HMAC_CTX_new();
        HMAC_Init_ex(c, key, 32, md, NULL);
        HMAC_Update(c, msg, 96);
        HMAC_Final(c, out, &ul);
        HMAC_CTX_free(c);
    });
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 2 && strcmp(argv[1], "setup") == 0) return setup(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "per-mac") == 0) return per_mac();
    fprintf(stderr, "usage: libcrypto_setup setup [noconf] [nostrings] [noadd] | per-mac\n");
    return 2;
}
