// The device's capacity in the training replay (plan/device_capacity.hpp): what cudaMalloc can
// reach caps the caching allocator's cache (release_cached_blocks, then a retry), a run whose
// tensors do not fit is out of memory whatever the budget, and --device-total is validated.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plan/device_capacity.hpp"
#include "plan/plan.hpp"
#include "plan/plan_args.hpp"
#include "plan/reserve_model.hpp"
#include "plan_fixtures.hpp"
#include "support/test_support.hpp"

namespace sparkops::plan {
namespace {

using fixtures::shape;
using test::run_sparkops;

constexpr std::uint64_t GiB = 1ULL << 30;

// Llama-3.1-8B LoRA at 8192 tokens of varying length: allocated 29.4 GiB, the rising-shapes
// replay reserves 69.1 GiB without a limit (the worksheet's figures).
RunConfig varying_8k() {
  RunConfig r;
  r.seq = 8192;
  r.packed = false;
  return r;
}

TEST(DeviceCapacity, IsTheReachLessWhatSitsBesideTheAllocator) {
  RunConfig run;
  const BesideAllocator beside{600, 100, 1000, 50, 7};
  EXPECT_EQ(allocator_capacity(run, beside), kNoCapacity);  // reach unknown: no limit
  run.device_reach_bytes = 10000;
  EXPECT_EQ(allocator_capacity(run, beside), 10000u - 600 - 100);  // discrete: context, NCCL
  run.reach_unified = true;  // the host side, paged and pinned memory share the pool
  EXPECT_EQ(allocator_capacity(run, beside), 10000u - 600 - 100 - 1000 - 50 - 7);
  run.device_reach_bytes = 500;
  EXPECT_EQ(allocator_capacity(run, beside), 0u);
}

TEST(DeviceCapacity, ReachComesFromTheFlagTheCardOrThePool) {
  RunConfig run;
  host::DeviceMemory card;
  card.total_bytes = 80 * GiB;
  card.free_bytes = 70 * GiB;
  host::PoolView pool;
  pool.effective_available_bytes = 110 * GiB;
  set_device_reach(run, std::nullopt, card, pool);  // a discrete card: its free memory
  EXPECT_EQ(run.device_reach_bytes, 70 * GiB);
  EXPECT_FALSE(run.reach_unified);
  set_device_reach(run, 79 * GiB, card, pool);  // --device-total wins there
  EXPECT_EQ(run.device_reach_bytes, 79 * GiB);
  set_device_reach(run, std::nullopt, std::nullopt, pool);  // unified: MemAvailable
  EXPECT_EQ(run.device_reach_bytes, 110 * GiB);
  EXPECT_TRUE(run.reach_unified);
  set_device_reach(run, 100 * GiB, std::nullopt, pool);  // ... or a lower --device-total
  EXPECT_EQ(run.device_reach_bytes, 100 * GiB);
  set_device_reach(run, std::nullopt, std::nullopt, std::nullopt);  // --budget alone: unknown
  EXPECT_EQ(run.device_reach_bytes, 0u);
  set_device_reach(run, 24 * GiB, std::nullopt, std::nullopt);
  EXPECT_EQ(run.device_reach_bytes, 24 * GiB);
  EXPECT_FALSE(run.reach_unified);
}

TEST(DeviceCapacity, ReleaseAndRetryCapsTheRisingReserve) {
  const auto s = shape("Llama-3.1-8B");
  const Estimate free_run = estimate(s, varying_8k());
  RunConfig run = varying_8k();
  run.device_reach_bytes = 48 * GiB;
  const Estimate e = estimate(s, run);
  const std::uint64_t capacity = 48 * GiB - estimator_constants().cuda_context_bytes;
  ASSERT_FALSE(e.out_of_memory);
  EXPECT_EQ(e.allocator_capacity_bytes, capacity);
  // Uncapped, the rising replay reserves more than the card has; capped, it releases its cache.
  ASSERT_GT(free_run.train_peak_reserved_bytes, capacity);
  EXPECT_EQ(free_run.alloc_retries, 0u);
  EXPECT_GT(e.alloc_retries, 0u);
  EXPECT_LE(e.train_peak_reserved_bytes, capacity);
  EXPECT_GT(e.train_peak_reserved_bytes, e.train_peak_allocated_bytes);
  EXPECT_EQ(e.train_peak_allocated_bytes, free_run.train_peak_allocated_bytes);
  EXPECT_EQ(e.terms.allocator_reserve, e.train_peak_reserved_bytes - e.train_peak_allocated_bytes);
  // The range: the fixed-length replay (below the capacity: unchanged) up to the capacity with
  // the smallest measured context, where a deeper chain of shapes would stop.
  EXPECT_EQ(e.reserved_low_bytes, free_run.reserved_low_bytes);
  EXPECT_EQ(e.reserved_high_bytes, 48 * GiB - estimator_constants().cuda_context_low_bytes);
  EXPECT_LE(e.train_peak_device_high_bytes, 48 * GiB);
}

TEST(DeviceCapacity, ARunWellInsideTheCapacityIsUnchanged) {
  const auto s = shape("Llama-3.1-8B");
  RunConfig run;  // packed 2048
  const Estimate free_run = estimate(s, run);
  run.device_reach_bytes = 80 * GiB;
  const Estimate e = estimate(s, run);
  EXPECT_EQ(e.train_peak_reserved_bytes, free_run.train_peak_reserved_bytes);
  EXPECT_EQ(e.train_peak_device_bytes, free_run.train_peak_device_bytes);
  EXPECT_EQ(e.alloc_retries, 0u);
  EXPECT_FALSE(e.out_of_memory);
}

TEST(DeviceCapacity, TensorsBeyondTheCapacityAreOutOfMemory) {
  const auto s = shape("Llama-3.1-8B");
  const Estimate free_run = estimate(s, varying_8k());
  RunConfig run = varying_8k();
  run.device_reach_bytes = 20 * GiB;  // allocated 29.4 GiB
  const Estimate e = estimate(s, run);
  EXPECT_TRUE(e.out_of_memory);
  // The figures are what the run would need: the replay without a limit.
  EXPECT_EQ(e.train_peak_reserved_bytes, free_run.train_peak_reserved_bytes);
  EXPECT_EQ(e.reserved_high_bytes, free_run.reserved_high_bytes);
}

PlanInput input_8k(std::uint64_t budget, std::optional<std::uint64_t> device_total) {
  PlanInput in;
  in.model.name = "Llama-3.1-8B";
  in.run = varying_8k();
  in.budget_bytes = budget;
  in.device_total_bytes = device_total;
  return in;
}

TEST(DeviceCapacity, OutOfMemoryIsWontFitWhateverTheBudget) {
  const auto r = make_plan(input_8k(1000 * GiB, 20 * GiB), PlanEnvironment{});
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ(r->verdict, Verdict::wont_fit);
  ASSERT_FALSE(r->advice.empty());
  // The ladder holds its rungs to the same capacity: the first that fits fits the device.
  const auto fit =
      std::find_if(r->advice.begin(), r->advice.end(), [](const Advice& a) { return a.fits; });
  ASSERT_NE(fit, r->advice.end());
  EXPECT_FALSE(fit->estimate.out_of_memory);
  EXPECT_LE(fit->estimate.train_peak_allocated_bytes, fit->estimate.allocator_capacity_bytes);
  EXPECT_EQ(std::count_if(r->notes.begin(), r->notes.end(),
                          [](const std::string& n) {
                            return n.find("out of memory on the device") != std::string::npos &&
                                   n.find("OutOfMemoryError") != std::string::npos;
                          }),
            1);
}

TEST(DeviceCapacity, ACacheReleaseFitsWithANote) {
  // Without the card's size the rising reserve alone overflows a 60 GiB budget.
  const auto blind = make_plan(input_8k(60 * GiB, std::nullopt), PlanEnvironment{});
  ASSERT_TRUE(blind) << blind.error().detail;
  EXPECT_EQ(blind->verdict, Verdict::wont_fit);
  const auto r = make_plan(input_8k(60 * GiB, 48 * GiB), PlanEnvironment{});
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_NE(r->verdict, Verdict::wont_fit);
  EXPECT_EQ(std::count_if(r->notes.begin(), r->notes.end(),
                          [](const std::string& n) {
                            return n.find("releases its cache") != std::string::npos &&
                                   n.find("synchronizes the device") != std::string::npos;
                          }),
            1);
}

TEST(DeviceCapacity, CliPrintsTheReleaseAndItsJson) {
  const std::vector<std::string> args = {
      "plan",    "Llama-3.1-8B", "--seq", "8192",           "--lengths",
      "varying", "--budget",     "60",    "--device-total", "48"};
  const auto text = run_sparkops(args);
  ASSERT_NE(text.exit_code, 2) << text.err;
  EXPECT_NE(text.exit_code, 1) << text.out;
  EXPECT_NE(text.out.find("note: the tensors fit the device, but the caching allocator reaches "
                          "its capacity"),
            std::string::npos)
      << text.out;
  auto json_args = args;
  json_args.push_back("--json");
  const auto r = run_sparkops(json_args);
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j["device_capacity"];
  EXPECT_EQ(c["reach_bytes"], 48 * GiB);
  EXPECT_EQ(c["unified"], false);
  EXPECT_EQ(c["allocator_capacity_bytes"], 48 * GiB - estimator_constants().cuda_context_bytes);
  EXPECT_GT(c["alloc_retries"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(c["out_of_memory"], false);
  EXPECT_LE(j["train_peak_reserved_range_bytes"][1].get<std::uint64_t>(), 48 * GiB);
  // --budget without --device-total: the reach is unknown.
  const auto blind =
      nlohmann::json::parse(run_sparkops({"plan", "Llama-3.1-8B", "--budget", "60", "--json"}).out);
  EXPECT_TRUE(blind["device_capacity"].is_null());
}

TEST(DeviceCapacity, CliOutOfMemoryExitsOne) {
  const auto r = run_sparkops({"plan", "Llama-3.1-8B", "--seq", "8192", "--budget", "1000",
                               "--device-total", "20", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "wont_fit");
  EXPECT_EQ(j["device_capacity"]["out_of_memory"], true);
}

TEST(DeviceCapacity, DeviceTotalIsValidated) {
  for (const char* bad : {"0", "abc", "-1", "17T", "1e30", "5 parsecs"}) {
    const auto r = run_sparkops({"plan", "Llama-3.1-8B", "--device-total", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << " " << r.out;
    EXPECT_EQ(r.err.rfind("sparkops: --device-total: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(parse_device_total("79.25").value(), static_cast<std::uint64_t>(79.25 * GiB));
  EXPECT_EQ(parse_device_total("16T").value(), kMaxDeviceTotal);
  EXPECT_FALSE(parse_device_total("16.1T"));
}

}  // namespace
}  // namespace sparkops::plan
