// SPDX-License-Identifier: Apache-2.0
// The few PMIx types and constants the transport uses, declared here so that libbootstrap builds
// without libpmix-dev (the library itself is loaded at run time, see pmix_library.hpp).
//
// PMIx keeps these layouts stable across releases (the standard fixes them: v3 to v5 agree);
// tests/api/test_api_internals.cpp checks them against the real <pmix.h> wherever it is
// installed. Only what is read or written is named: a value's union is padded to its real size
// so that arrays of info structs have the right stride.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sddp::pmix_abi {

inline constexpr std::size_t kMaxNsLen = 255;   // PMIX_MAX_NSLEN
inline constexpr std::size_t kMaxKeyLen = 511;  // PMIX_MAX_KEYLEN

using status_t = int;
using rank_t = std::uint32_t;
using data_type_t = std::uint16_t;
using scope_t = std::uint8_t;

inline constexpr status_t kSuccess = 0;                      // PMIX_SUCCESS
inline constexpr rank_t kRankWildcard = UINT32_MAX - 1;      // PMIX_RANK_WILDCARD
inline constexpr data_type_t kBool = 1;                      // PMIX_BOOL
inline constexpr data_type_t kUint32 = 14;                   // PMIX_UINT32
inline constexpr data_type_t kByteObject = 27;               // PMIX_BYTE_OBJECT
inline constexpr scope_t kGlobal = 3;                        // PMIX_GLOBAL
inline constexpr const char* kCollectData = "pmix.collect";  // PMIX_COLLECT_DATA (bool)
inline constexpr const char* kJobSize = "pmix.job.size";     // PMIX_JOB_SIZE (uint32)

struct Proc {  // pmix_proc_t
    char nspace[kMaxNsLen + 1];
    rank_t rank;
};

struct ByteObject {  // pmix_byte_object_t
    char* bytes;
    std::size_t size;
};

struct Value {  // pmix_value_t
    data_type_t type;
    union {
        bool flag;
        std::uint32_t uint32;
        ByteObject bo;
        unsigned char pad[24];  // the largest member (pmix_envar_t)
    } data;
};

struct Info {  // pmix_info_t
    char key[kMaxKeyLen + 1];
    std::uint32_t flags;  // pmix_info_directives_t
    Value value;
};

static_assert(sizeof(Proc) == 260);
static_assert(sizeof(Value) == 32 && offsetof(Value, data) == 8);
static_assert(sizeof(Info) == 552 && offsetof(Info, value) == 520);

}  // namespace sddp::pmix_abi
