// NVML clocks-event reasons: names for JSON and metrics, words for text.

#include "gpu/throttle_reasons.hpp"

#include <gtest/gtest.h>

namespace sparkops::gpu {
namespace {

TEST(ThrottleReasons, NamesInBitOrderWithUnknownBitsInHex) {
  EXPECT_EQ(reason_names_joined(kReasonSwPowerCap | kReasonSwThermal), "sw_power_cap|sw_thermal");
  EXPECT_EQ(reason_names_joined(0x200), "0x200");
  EXPECT_EQ(reason_names_joined(0), "none");
}

TEST(ThrottleReasons, WordsForEveryKnownReason) {
  EXPECT_EQ(reason_words_joined(kReasonSwPowerCap | kReasonSwThermal),
            "software power cap, software thermal slowdown");
  EXPECT_EQ(reason_words_joined(kReasonHwSlowdown | kReasonHwPowerBrake, " + "),
            "hardware slowdown + hardware power brake (external)");
  for (const auto& name : reason_names(0x1FF)) {
    EXPECT_NE(reason_words(name), name) << name << " has no words";
    EXPECT_EQ(std::string(reason_words(name)).find('_'), std::string::npos) << name;
  }
  EXPECT_EQ(reason_words("0x200"), "0x200");
  EXPECT_EQ(reason_words_joined(0), "none");
}

}  // namespace
}  // namespace sparkops::gpu
