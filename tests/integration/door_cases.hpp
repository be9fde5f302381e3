// What the kernels' door tests (sor/test_sor_door.cpp, sweep3d/test_sweep3d_door.cpp) share:
// temporary .npy paths, reading the door's .npy output and comparing it bit for bit, and asking
// whether a random case's mesh can be planned before running it.
#pragma once

#include <tilepipe/run.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tp::test {

// A file in the temporary directory for this process: tp_<stem>_<pid>.npy.
inline std::string temp_npy_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          ("tp_" + stem + "_" + std::to_string(::getpid()) + ".npy"))
      .string();
}

// The float64 values of an .npy file (version 1 header, C order) and, where asked, its shape
// text, e.g. "(7, 5)".
inline std::vector<double> read_npy(const std::string& path, std::string* shape = nullptr) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 10U);
  if (bytes.size() < 10) return {};
  const std::size_t header = static_cast<unsigned char>(bytes[8]) +
                             256 * static_cast<std::size_t>(static_cast<unsigned char>(bytes[9]));
  EXPECT_NE(bytes.find("'descr': '<f8'"), std::string::npos);
  EXPECT_NE(bytes.find("'fortran_order': False"), std::string::npos);
  if (shape) {
    const auto at = bytes.find("'shape': ");
    *shape = at == std::string::npos ? "" : bytes.substr(at + 9, bytes.find(')', at) - at - 8);
  }
  std::vector<double> v((bytes.size() - 10 - header) / sizeof(double));
  std::memcpy(v.data(), bytes.data() + 10 + header, v.size() * sizeof(double));
  return v;
}

// The values written equal the expected ones bit for bit.
inline void expect_same_bits(const std::vector<double>& written,
                             const std::vector<double>& expected, const std::string& what) {
  ASSERT_EQ(written.size(), expected.size()) << what;
  EXPECT_EQ(std::memcmp(written.data(), expected.data(), expected.size() * sizeof(double)), 0)
      << what;
}

// Whether the door can plan this space with these dependences on o.nodes ranks (a random grid
// too small for its mesh is grown until it can).
inline bool plannable(const tp::plan::Index& space, const std::vector<tp::plan::Index>& deps,
                      const tp::runtime::RunOptions& o) {
  auto d = tp::plan::DependenceMatrix::make(static_cast<int>(space.size()), deps);
  return d && tp::runtime::plan_run(space, *d, o.nodes, o).has_value();
}

}  // namespace tp::test
