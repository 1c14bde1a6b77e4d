#include "synpl/Analysis/Shapes.h"

#include <catch2/catch.hpp>

using namespace synpl::shapes;
using Dims = llvm::SmallVector<int64_t, 4>;

static Dims dims(ShapeResult const &r) { return Dims(r.shape().begin(), r.shape().end()); }

TEST_CASE("matmul contracts the inner dimension", "[shapes]") {
  auto r = matmulShape({128, 784}, {784, 256});
  REQUIRE(r.succeeded());
  CHECK(dims(r) == Dims{128, 256});
}

TEST_CASE("matmul rejects mismatched inner dimensions and other ranks", "[shapes]") {
  auto r = matmulShape({128, 784}, {256, 784});
  REQUIRE(r.failed());
  CHECK(r.message().contains("784"));
  CHECK(r.message().contains("256"));
  CHECK(matmulShape({128}, {128, 4}).failed());
  CHECK(matmulShape({2, 3, 4}, {4, 5}).failed());
}

TEST_CASE("elementwise ops need equal shapes", "[shapes]") {
  CHECK(dims(elementwiseShape({4, 5}, {4, 5})) == Dims{4, 5});
  CHECK(elementwiseShape({4, 5}, {5}).failed());
  CHECK(elementwiseShape({}, {}).succeeded());
}

TEST_CASE("broadcast aligns trailing dimensions by default", "[shapes]") {
  CHECK(dims(broadcastShape({256}, {128, 256}, {})) == Dims{128, 256});
  CHECK(dims(broadcastShape({}, {3, 4}, {})) == Dims{3, 4});
  CHECK(dims(broadcastShape({1, 256}, {128, 256}, {})) == Dims{128, 256});
  CHECK(broadcastShape({128}, {128, 256}, {}).failed());
  CHECK(broadcastShape({2, 3}, {3}, {}).failed());
}

TEST_CASE("broadcast with explicit dims maps input to output dimensions", "[shapes]") {
  CHECK(dims(broadcastShape({128}, {128, 256}, {0})) == Dims{128, 256});
  CHECK(broadcastShape({128}, {128, 256}, {1}).failed());
  CHECK(broadcastShape({3, 4}, {3, 5, 4}, {2, 0}).failed()); // not increasing
  CHECK(broadcastShape({3}, {3, 4}, {2}).failed());          // out of range
  CHECK(broadcastShape({3}, {3, 4}, {0, 1}).failed());       // one per input dim
}

TEST_CASE("transpose reverses or permutes", "[shapes]") {
  CHECK(dims(transposeShape({128, 784}, {})) == Dims{784, 128});
  CHECK(dims(transposeShape({2, 3, 4}, {1, 0, 2})) == Dims{3, 2, 4});
  CHECK(transposeShape({2, 3}, {0, 0}).failed());
  CHECK(transposeShape({2, 3}, {0}).failed());
}

TEST_CASE("reduce removes an axis or all of them", "[shapes]") {
  CHECK(dims(reduceShape({128, 10}, 1)) == Dims{128});
  CHECK(dims(reduceShape({128, 10}, 0)) == Dims{10});
  CHECK(reduceShape({128, 10}, std::nullopt).shape().empty());
  CHECK(reduceShape({128, 10}, 2).failed());
  CHECK(reduceShape({128, 10}, -1).failed());
}

TEST_CASE("reshape keeps the element count", "[shapes]") {
  CHECK(dims(reshapeShape({128, 28, 28}, {128, 784})) == Dims{128, 784});
  CHECK(reshapeShape({128, 28, 28}, {128, 785}).failed());
  CHECK(reshapeShape({1}, {}).succeeded());
}

TEST_CASE("one_hot appends the class dimension", "[shapes]") {
  CHECK(dims(oneHotShape({128}, 10)) == Dims{128, 10});
  CHECK(oneHotShape({128}, 0).failed());
}

TEST_CASE("element counts and formatting", "[shapes]") {
  CHECK(numElements({784, 256}) == 200704u);
  CHECK(numElements({}) == 1u);
  CHECK_FALSE(numElements({-1, 3}));
  CHECK_FALSE(numElements({1ll << 40, 1ll << 40}));
  CHECK(formatShape({128, 784}) == "[128, 784]");
  CHECK(formatShape({}) == "[]");
}
