// The `orch` command as a user meets it: exit codes, messages, files written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/orch_cli.h"
#include "ir/npy.h"

namespace orch {
namespace {
namespace fs = std::filesystem;

using cli_test::orch_cli;
using cli_test::Outcome;

const std::string kMlp = std::string(ORCH_SOURCE_DIR) + "/examples/tiny_mlp.orch.txt";

class Cli : public cli_test::CliTest {
 protected:
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }
};

TEST_F(Cli, HelpListsEverySubcommand) {
  Outcome r = orch_cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"info", "convert", "run", "conformance"})
    EXPECT_NE(r.output.find(sub), std::string::npos) << sub;
}

TEST_F(Cli, BadFlagIsRejected) {
  Outcome r = orch_cli("info --no-such-flag " + kMlp);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--no-such-flag"), std::string::npos) << r.output;
}

TEST_F(Cli, InfoDescribesTheModel) {
  Outcome r = orch_cli("info " + kMlp);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("x: f32[4,16]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("probs: f32[4,8]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MatMul"), std::string::npos) << r.output;
  // 16*32 + 32 + 32*8 + 8 weights.
  EXPECT_NE(r.output.find("parameters: 808"), std::string::npos) << r.output;
}

TEST_F(Cli, RunWritesSoftmaxRows) {
  Outcome r = orch_cli("run " + kMlp + " --random-inputs --seed 3 --out " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Tensor probs = read_npy_file(path("out/probs.npy"));
  ASSERT_EQ(probs.shape(), (Shape{4, 8}));
  for (int row = 0; row < 4; ++row) {
    double sum = 0;
    for (int j = 0; j < 8; ++j) sum += probs.get(row * 8 + j);
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST_F(Cli, RunReadsNpyInputs) {
  Tensor x(DType::f32, {4, 16});
  write_npy_file(x, path("x.npy"));
  Outcome r = orch_cli("run " + kMlp + " --input x=" + path("x.npy") + " --out " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("out/probs.npy")));
}

TEST_F(Cli, MissingInputIsNamed) {
  Outcome r = orch_cli("run " + kMlp + " --out " + path("out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("missing input 'x'"), std::string::npos) << r.output;
}

TEST_F(Cli, InputOrShapeGivenTwiceIsNamed) {
  write_npy_file(Tensor(DType::f32, {4, 16}), path("x.npy"));
  const std::string x = " --input x=" + path("x.npy");
  Outcome r = orch_cli("run " + kMlp + x + x + " --out " + path("out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--input names 'x' twice"), std::string::npos) << r.output;
  r = orch_cli("info " + kMlp + " --shape x=4x16 --shape x=4x16");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--shape names 'x' twice"), std::string::npos) << r.output;
}

TEST_F(Cli, WrongInputShapeIsNamed) {
  write_npy_file(Tensor(DType::f32, {2, 16}), path("x.npy"));
  Outcome r = orch_cli("run " + kMlp + " --input x=" + path("x.npy") + " --out " + path("out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("input 'x' is f32[2,16], the model expects f32[4,16]"), std::string::npos)
      << r.output;
}

TEST_F(Cli, WrongInputDtypeIsNamed) {
  write_npy_file(Tensor(DType::i64, {4, 16}), path("x.npy"));
  Outcome r = orch_cli("run " + kMlp + " --input x=" + path("x.npy") + " --out " + path("out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("input 'x' is i64[4,16]"), std::string::npos) << r.output;
}

TEST_F(Cli, UnreadableNpyIsNamed) {
  write("x.npy", "garbage");
  Outcome r = orch_cli("run " + kMlp + " --input x=" + path("x.npy") + " --out " + path("out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("input 'x': '" + path("x.npy") + "' is not a .npy file"),
            std::string::npos)
      << r.output;
}

// A number out of a flag's range, NaN and infinity included, stops the command before any work
// and says the rule.
TEST_F(Cli, OutOfRangeNumbersAreRejected) {
  const std::string module = " -o " + path("module");
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"optimize " + kMlp + module + " --threads -3",
            "--threads: must be a number at least 0, not -3"},
           {"optimize " + kMlp + module + " --time-budget nan",
            "--time-budget: must be a number above 0, not nan"},
           {"optimize " + kMlp + module + " --exact-s inf",
            "--exact-s: must be a number at least 0, not inf"},
           {"tune " + kMlp + " --budget-ms 0", "--budget-ms: must be a number above 0, not 0"},
           {"run " + kMlp + " --out " + path("out") + " --print -1",
            "--print: must be a number at least 0, not -1"},
           {"rewrite " + kMlp + " --alpha 0.5", "--alpha: must be a number at least 1, not 0.5"},
           {"schedule " + kMlp + " --top-k 0", "--top-k: must be a number at least 1, not 0"},
       }) {
    Outcome r = orch_cli(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(path("module")));
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(Cli, MissingModelFileIsNamed) {
  Outcome r = orch_cli("info " + path("absent.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(path("absent.onnx")), std::string::npos) << r.output;
}

TEST_F(Cli, UnknownExtensionIsRejected) {
  write("model.bin", "x");
  Outcome r = orch_cli("info " + path("model.bin"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("unknown model format"), std::string::npos) << r.output;
}

TEST_F(Cli, ConvertRoundTripsThroughOnnx) {
  ASSERT_EQ(orch_cli("convert " + kMlp + " " + path("m.onnx")).exit_code, 0);
  Outcome back = orch_cli("convert " + path("m.onnx") + " " + path("m.orch.txt"));
  ASSERT_EQ(back.exit_code, 0) << back.output;
  Outcome a = orch_cli("info " + kMlp);
  Outcome b = orch_cli("info " + path("m.orch.txt"));
  // Same model apart from the file name on the first line.
  EXPECT_EQ(a.output.substr(a.output.find('\n')), b.output.substr(b.output.find('\n')));
}

}  // namespace
}  // namespace orch
