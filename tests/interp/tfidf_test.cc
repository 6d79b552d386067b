// TfIdfVectorizer on small inputs checked by hand.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "op_test_util.h"

namespace orch::op_test {
namespace {

// Unigrams 1 and 3 (columns 0, 1), bigrams [1, 2], [2, 3] and [1, 1] (columns 2, 3, 4), lengths
// 1 and 2, skipping at most one item.
Attributes pool(std::string mode) {
  return {{"mode", std::move(mode)},
          {"min_gram_length", int64_t{1}},
          {"max_gram_length", int64_t{2}},
          {"max_skip_count", int64_t{1}},
          {"ngram_counts", std::vector<int64_t>{0, 2}},
          {"ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4}},
          {"pool_int64s", std::vector<int64_t>{1, 3, 1, 2, 2, 3, 1, 1}}};
}

TEST(TfIdfVectorizer, CountsUnigramsOnceAndBigramsForEachSkip) {
  // Row [1, 2, 1, 2, 3]: unigram 1 twice and 3 once; adjacent bigrams [1, 2] twice and [2, 3]
  // once; with one skip [1, 1] (items 0 and 2), while [2, 2] and [1, 3] are not pooled.
  // Row [3, 3, 2, 3, 1]: unigram 1 once and 3 three times, adjacent [2, 3] once, and the skip
  // pairs [3, 2], [3, 3], [2, 1] none.
  Tensor x = ints(DType::i64, {2, 5}, {1, 2, 1, 2, 3, 3, 3, 2, 3, 1});
  Tensor y = run("TfIdfVectorizer", {x}, pool("TF"));
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.shape(), (Shape{2, 5}));
  EXPECT_EQ(y.to_doubles(), (Doubles{2, 1, 2, 1, 1, 1, 3, 0, 1, 0}));
  // One row of i32 gives a [width] output.
  Tensor row = ints(DType::i32, {5}, {1, 2, 1, 2, 3});
  EXPECT_EQ(run("TfIdfVectorizer", {row}, pool("TF")).to_doubles(), (Doubles{2, 1, 2, 1, 1}));
  // Weights by output column: IDF keeps the weight where the count is positive, TFIDF multiplies.
  Attributes idf = pool("IDF");
  idf["weights"] = std::vector<float>{0.5, 1, 2, 3, 4};
  EXPECT_EQ(run("TfIdfVectorizer", {x}, idf).to_doubles(),
            (Doubles{0.5, 1, 2, 3, 4, 0.5, 1, 0, 3, 0}));
  Attributes tfidf = pool("TFIDF");
  tfidf["weights"] = std::vector<float>{0.5, 1, 2, 3, 4};
  EXPECT_EQ(run("TfIdfVectorizer", {x}, tfidf).to_doubles(),
            (Doubles{1, 1, 4, 3, 4, 0.5, 3, 0, 3, 0}));
}

TEST(TfIdfVectorizer, RejectsBadAttributesAndFloatInput) {
  Tensor x = ints(DType::i64, {5}, {1, 2, 1, 2, 3});
  Attributes short_indexes = pool("TF");
  short_indexes["ngram_indexes"] = std::vector<int64_t>{0, 1, 2};
  EXPECT_NE(error_of("TfIdfVectorizer", {x}, short_indexes)
                .find("TfIdfVectorizer needs one ngram_indexes entry per pooled n-gram (5), got 3"),
            std::string::npos);
  Attributes split_bigram = pool("TF");
  split_bigram["ngram_counts"] = std::vector<int64_t>{0, 3};
  EXPECT_NE(error_of("TfIdfVectorizer", {x}, split_bigram)
                .find("ngram_counts[1] = 3 does not start a run of whole 2-grams ending at 8"),
            std::string::npos);
  EXPECT_NE(error_of("TfIdfVectorizer", {x}, pool("BM25"))
                .find("TfIdfVectorizer mode must be TF, IDF or TFIDF, got 'BM25'"),
            std::string::npos);
  EXPECT_NE(error_of("TfIdfVectorizer", {f32({2}, {1, 2})}, pool("TF"))
                .find("TfIdfVectorizer input has unsupported type f32"),
            std::string::npos);
}

}  // namespace
}  // namespace orch::op_test
