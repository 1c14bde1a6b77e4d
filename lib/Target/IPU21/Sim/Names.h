//===- Names.h - Names in one-line messages ------------------------*- C++ -*-===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_NAMES_H
#define SYNPL_LIB_TARGET_IPU21_SIM_NAMES_H

#include <string>
#include <string_view>

namespace synpl::ipu21::sim {

/// `name` in single quotes, fit for a one-line message: bytes outside
/// printable ASCII shown as '?', at most 64 of them.
inline std::string quoteName(std::string_view name) {
  std::string s = "'";
  for (size_t i = 0; i < name.size() && i < 64; ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    s += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  }
  if (name.size() > 64)
    s += "...";
  return s + "'";
}

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_NAMES_H
