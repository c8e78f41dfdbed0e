// SPDX-License-Identifier: Apache-2.0
#include "core/base/field_codec.hpp"

namespace sddp {

void FieldReader::fail(const char* field, const std::string& why) {
    if (error_.empty()) error_ = std::string(record_) + ": " + field + " " + why;
}

Status FieldReader::finish() {
    if (ok() && remaining() != 0) fail("payload", "has trailing bytes");
    if (!ok()) return make_error(Errc::protocol, error_);
    return ok_status();
}

}  // namespace sddp
