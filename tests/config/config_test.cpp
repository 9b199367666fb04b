#include "config/config.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::config {
namespace {

TEST(Config, DefaultsFollowTheSkill) {
  const Config c;
  EXPECT_EQ(c.get_bytes("pool.overhead"), 4ULL << 30);
  EXPECT_DOUBLE_EQ(c.get_number("thermal.rated_watts"), 240);
  EXPECT_DOUBLE_EQ(c.get_number("thermal.ceiling_watts"), 100);
  EXPECT_EQ(c.setting("pool.overhead").source, "default");
}

TEST(Config, LaterLayersWinAndRememberTheirSource) {
  test::TempDir dir;
  test::write_text(dir / "system.toml",
                   "[pool]\noverhead = \"5GiB\"\n[thermal]\nceiling_watts = 95\n");
  test::write_text(dir / "user.toml", "[pool]\noverhead = 6\n");
  ConfigPaths paths{(dir / "system.toml").string(), (dir / "user.toml").string(), ""};
  const auto c = load_config(paths);
  ASSERT_TRUE(c) << c.error().detail;
  EXPECT_EQ(c->get_bytes("pool.overhead"), 6ULL << 30);
  EXPECT_EQ(c->setting("pool.overhead").source, (dir / "user.toml").string());
  EXPECT_DOUBLE_EQ(c->get_number("thermal.ceiling_watts"), 95);
}

TEST(Config, UnknownKeyIsAnErrorNamingFileAndKey) {
  Config c;
  const auto st = c.apply_toml("[pool]\noverhed = \"4G\"\n", "/etc/x.toml");
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().detail.find("/etc/x.toml"), std::string::npos);
  EXPECT_NE(st.error().detail.find("pool.overhed"), std::string::npos);
}

TEST(Config, WrongTypeIsAnErrorAndLeavesValuesUntouched) {
  Config c;
  EXPECT_FALSE(c.apply_toml("[pool]\noverhead = \"lots\"\n", "f"));
  EXPECT_FALSE(c.apply_toml("[sample]\nfsync_every = \"often\"\n", "f"));
  EXPECT_EQ(c.get_bytes("pool.overhead"), 4ULL << 30);
}

TEST(Config, MalformedTomlNamesTheLine) {
  Config c;
  const auto st = c.apply_toml("[pool\n", "bad.toml");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, Errc::malformed);
  EXPECT_NE(st.error().detail.find("bad.toml:1"), std::string::npos);
}

TEST(Config, MissingExplicitFileIsAnErrorButMissingUserFileIsNot) {
  test::TempDir dir;
  EXPECT_TRUE(load_config({(dir / "no1").string(), (dir / "no2").string(), ""}));
  const auto c = load_config({"", "", (dir / "no3").string()});
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::not_found);
}

TEST(ConfigCli, ShowsSourceOfEachValue) {
  test::TempDir dir;
  test::write_text(dir / "c.toml", "[thermal]\nhot_celsius = 85\n");
  const auto res = test::run_sparkops({"config"}, {{"SPARKOPS_CONFIG", (dir / "c.toml").string()}});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("thermal.hot_celsius"), std::string::npos);
  EXPECT_NE(res.out.find((dir / "c.toml").string()), std::string::npos);
}

TEST(ConfigCli, BrokenConfigFileIsOneLineExit2) {
  test::TempDir dir;
  test::write_text(dir / "c.toml", "[pool]\noverhead = []\n");
  const auto res = test::run_sparkops({"status"}, {{"SPARKOPS_CONFIG", (dir / "c.toml").string()}});
  EXPECT_EQ(res.exit_code, 2);
  EXPECT_NE(res.err.find("c.toml"), std::string::npos);
}

TEST(Cli, UnknownSubcommandIsExit2) {
  const auto res = test::run_sparkops({"frobnicate"});
  EXPECT_EQ(res.exit_code, 2);
  EXPECT_NE(res.err.find("frobnicate"), std::string::npos);
}

TEST(Cli, HelpListsStatus) {
  const auto res = test::run_sparkops({"--help"});
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_NE(res.out.find("status"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::config
