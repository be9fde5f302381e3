// OutputFile: the checks before the work, the atomic replace, and no file left behind.
#include <tilepipe/support/output_file.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;

/// A fresh directory for one test, removed at the end.
class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tilepipe-outfile-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  /// The names in the directory, sorted (temporaries start with '.').
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string read(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(OutputFileTest, writes_a_new_file_and_leaves_nothing_else) {
  auto out = tp::OutputFile::make(at("a.json"));
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(entries(), std::vector<std::string>{}) << "the check leaves no probe behind";
  ASSERT_TRUE(out->write("{}\n"));
  EXPECT_EQ(read(at("a.json")), "{}\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"a.json"});
  struct stat st {};
  ASSERT_EQ(::stat(at("a.json").c_str(), &st), 0);
  const mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(OutputFileTest, replaces_an_existing_file_keeping_its_mode) {
  std::ofstream(at("m.json")) << "old";
  ASSERT_EQ(::chmod(at("m.json").c_str(), 0640), 0);
  auto out = tp::OutputFile::make(at("m.json"));
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(read(at("m.json")), "old") << "nothing changes before write";
  ASSERT_TRUE(out->write("new"));
  EXPECT_EQ(read(at("m.json")), "new");
  struct stat st {};
  ASSERT_EQ(::stat(at("m.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(OutputFileTest, refuses_bad_paths_naming_path_and_problem) {
  fs::create_directories(dir_ / "sub");
  std::ofstream(at("plain")) << "x";
  const struct {
    std::string path;
    std::string message;
  } cases[] = {
      {"", "cannot write '': the path is empty (name a file)"},
      {at("missing/a.json"), "cannot write '" + at("missing/a.json") + "': directory '" +
                                 at("missing") + "' does not exist"},
      {at("sub"), "cannot write '" + at("sub") + "': it is a directory"},
      {at("sub") + "/", "cannot write '" + at("sub") + "/': it names a directory (it ends in '/')"},
      {at("plain/a.json"),
       "cannot write '" + at("plain/a.json") + "': '" + at("plain") + "' is not a directory"},
      {"/dev/null", "cannot write '/dev/null': it is not a regular file"},
  };
  for (const auto& c : cases) {
    auto out = tp::OutputFile::make(c.path);
    ASSERT_FALSE(out) << c.path;
    EXPECT_EQ(out.error().code, tp::Errc::invalid_argument) << c.path;
    EXPECT_EQ(out.error().message, c.message);
  }
  EXPECT_EQ(entries(), (std::vector<std::string>{"plain", "sub"}));
}

TEST_F(OutputFileTest, refuses_a_directory_where_no_file_can_be_created) {
  // /proc accepts no new files, even for root.
  auto out = tp::OutputFile::make("/proc/version");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message.rfind("cannot write '/proc/version': ", 0), 0u)
      << out.error().message;
}

TEST_F(OutputFileTest, a_temporary_is_committed_or_removed) {
  std::ofstream(at("plot.png")) << "old";
  {
    auto out = tp::OutputFile::make(at("plot.png"));
    ASSERT_TRUE(out);
    auto temp = out->reserve_temp();
    ASSERT_TRUE(temp) << temp.error().message;
    EXPECT_EQ(fs::path(*temp).extension(), ".png") << *temp;
    EXPECT_EQ(fs::path(*temp).parent_path(), dir_);
    std::ofstream(*temp) << "half";
    EXPECT_EQ(entries().size(), 2u);
  }  // not committed: removed, the old file untouched
  EXPECT_EQ(entries(), std::vector<std::string>{"plot.png"});
  EXPECT_EQ(read(at("plot.png")), "old");
  auto out = tp::OutputFile::make(at("plot.png"));
  ASSERT_TRUE(out);
  auto temp = out->reserve_temp();
  ASSERT_TRUE(temp);
  std::ofstream(*temp) << "new";
  ASSERT_TRUE(out->commit());
  EXPECT_EQ(read(at("plot.png")), "new");
  EXPECT_EQ(entries(), std::vector<std::string>{"plot.png"});
}

TEST_F(OutputFileTest, a_vanished_directory_is_a_system_error) {
  std::ofstream(at("keep.csv")) << "old";
  auto out = tp::OutputFile::make(at("keep.csv"));
  ASSERT_TRUE(out);
  fs::remove_all(dir_);  // the directory vanished during the work
  auto st = out->write("new");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, tp::Errc::system);
  EXPECT_EQ(st.error().message.rfind("cannot write '" + at("keep.csv") + "': ", 0), 0u)
      << st.error().message;
}

TEST_F(OutputFileTest, follows_a_symbolic_link_to_its_target) {
  std::ofstream(at("real.json")) << "old";
  fs::create_symlink(at("real.json"), at("link.json"));
  auto out = tp::OutputFile::make(at("link.json"));
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_TRUE(out->write("new"));
  EXPECT_TRUE(fs::is_symlink(at("link.json")));
  EXPECT_EQ(read(at("real.json")), "new");
}

}  // namespace
