// The forward walk through a layer graph (sim::forward_peak): which storages are live at each
// operator, against chains worked by hand. Sizes are per token; every case runs at 10 tokens.
#include <gtest/gtest.h>

#include "plan/autograd_sim_graph.hpp"

namespace sparkops::plan::sim {
namespace {

constexpr double kTokens = 10;

// in (2 B, the caller's) -> a -> b -> c (4 B each, c the output): prim k makes the k-th of them.
struct Chain {
  Graph g;
  int a = -1, b = -1, c = -1;
  Chain() {
    const int in = g.fresh(1, 2, true);
    a = next(in);
    b = next(a);
    c = next(b);
  }
  int next(int from) {
    Prim p;
    p.inputs = {from};
    p.grad_inputs = {from};
    p.out = g.fresh(1, 4, true);
    return g.push(p);
  }
};

TEST(LayerForward, AStorageDiesAfterItsLastOperand) {
  Chain ch;
  // At b: a (its operand) and b; at c: b and c. a is gone by then.
  EXPECT_DOUBLE_EQ(forward_peak(ch.g, ch.c, true, 1, kTokens, 1), 80);
}

TEST(LayerForward, ASavedStorageStaysUntilBackwardUnlessNothingRecords) {
  Chain ch;
  ch.g.save(ch.g.prims[1], ch.a);  // b's backward needs a
  EXPECT_DOUBLE_EQ(forward_peak(ch.g, ch.c, true, 1, kTokens, 1), 120);
  // Under no_grad nothing is kept: a dies after b as before.
  EXPECT_DOUBLE_EQ(forward_peak(ch.g, ch.c, false, 1, kTokens, 1), 80);
}

TEST(LayerForward, AHeldStorageStaysUntilTheValueThatFreesIt) {
  Chain ch;
  ch.g.held_until[ch.g.tensors[ch.a].storage] = 2;  // a caller's variable keeps a until c exists
  EXPECT_DOUBLE_EQ(forward_peak(ch.g, ch.c, false, 1, kTokens, 1), 120);
}

TEST(LayerForward, AnOperatorsTemporariesComeOnTopOfItsOperandsAndOutput) {
  Chain ch;
  ch.g.prims[1].fwd_extra = 3;  // at b: a, b and 3 B a token of the formula's own tensors
  EXPECT_DOUBLE_EQ(forward_peak(ch.g, ch.c, true, 1, kTokens, 1), 110);
}

TEST(LayerForward, ADequantizedWeightPrecedesTheOutputItMakes) {
  Chain ch;
  ch.g.storages[ch.g.tensors[ch.b].storage].dequant = 100;
  // Two copies (quant_state dtype, then .to()) beside a before b exists; one beside a and b.
  EXPECT_DOUBLE_EQ(forward_peak(ch.g, ch.c, true, 1, kTokens, 2), 240);
  EXPECT_DOUBLE_EQ(forward_peak(ch.g, ch.c, true, 1, kTokens, 1), 180);
}

}  // namespace
}  // namespace sparkops::plan::sim
