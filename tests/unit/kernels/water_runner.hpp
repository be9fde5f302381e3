// Runs EMBOSS water on two sequences and reads its markx10 report; shared by the sw tests that
// compare with water (test_sw_water.cpp, test_sw_align_water.cpp). Needs TP_WATER_PROGRAM.
#pragma once

#include <tilepipe/kernels/sw.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace tp::kernels {

struct WaterAlignment {
  double score = -1;
  long start[2] = {0, 0};
  long stop[2] = {0, 0};
};

// water's markx10 output: sw_score, then al_start and al_stop of each sequence.
inline WaterAlignment run_water(const std::string& a, const std::string& b, const char* matrix,
                                const char* type, GapCosts g) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(::getpid());
  const std::string fa = (dir / ("tp_water_a_" + tag + ".fa")).string();
  const std::string fb = (dir / ("tp_water_b_" + tag + ".fa")).string();
  std::ofstream(fa) << ">a\n" << a << "\n";
  std::ofstream(fb) << ">b\n" << b << "\n";
  const std::string cmd = std::string(TP_WATER_PROGRAM) + " -asequence " + fa + " -bsequence " +
                          fb + " -s" + type + "1 -s" + type + "2 -datafile " + matrix +
                          " -gapopen " + std::to_string(g.open) + " -gapextend " +
                          std::to_string(g.extend) + " -aformat markx10 -outfile stdout -auto";
  WaterAlignment w;
  FILE* p = ::popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr) << cmd;
  if (!p) return w;
  char line[4096];
  int starts = 0, stops = 0;
  while (std::fgets(line, sizeof line, p)) {
    std::sscanf(line, "; sw_score: %lf", &w.score);
    long v = 0;
    if (std::sscanf(line, "; al_start: %ld", &v) == 1 && starts < 2) w.start[starts++] = v;
    if (std::sscanf(line, "; al_stop: %ld", &v) == 1 && stops < 2) w.stop[stops++] = v;
  }
  EXPECT_EQ(::pclose(p), 0) << cmd;
  std::filesystem::remove(fa);
  std::filesystem::remove(fb);
  return w;
}

}  // namespace tp::kernels
