// TileConfig -> HalideSchedule, and the schedule's text form.
#include <gtest/gtest.h>

#include "halide_util.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "schedule/search.h"

namespace orch::codegen {
namespace {

TEST(HalideScheduleText, RoundTripIsExact) {
  HalideSchedule s;
  s.parallel_dim = 1;
  s.vector_width = 8;
  s.reduce_step = 4;
  s.tiles[7] = {1, 64, 0};
  s.tiles[2] = {};
  s.placement[3] = HalidePlacement::inline_;
  s.placement[4] = HalidePlacement::tile;
  s.placement[5] = HalidePlacement::root;
  s.reduce_steps[4] = 16;
  std::string text = halide_schedule_to_text(s);
  EXPECT_EQ(text,
            "parallel=1 vector=8 reduce_step=4 tile.2= tile.7=1,64,0 place.3=inline place.4=tile "
            "place.5=root reduce.4=16");
  EXPECT_EQ(halide_schedule_from_text(text), s);
  EXPECT_EQ(halide_schedule_to_text(halide_schedule_from_text(text)), text);
  EXPECT_EQ(halide_schedule_from_text(""), HalideSchedule{});
  EXPECT_EQ(halide_schedule_from_text(halide_schedule_to_text(HalideSchedule{})), HalideSchedule{});
  // Tasks are written when set, after the fixed scalar fields.
  s.parallel_tasks = 16;
  text = halide_schedule_to_text(s);
  EXPECT_EQ(text.substr(0, 43), "parallel=1 vector=8 reduce_step=4 tasks=16 ");
  EXPECT_EQ(halide_schedule_from_text(text), s);
}

std::string parse_error(std::string_view text) {
  try {
    halide_schedule_from_text(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HalideScheduleText, ErrorsNameTheField) {
  EXPECT_EQ(parse_error("parallel=x"), "halide schedule field 'parallel=x': 'x' is not an integer");
  EXPECT_EQ(parse_error("vector=0"), "halide schedule field 'vector=0': the width must be >= 1");
  EXPECT_EQ(parse_error("tile.3=1,,2"),
            "halide schedule field 'tile.3=1,,2': '' is not an integer");
  EXPECT_EQ(parse_error("tile.3=1,-2"),
            "halide schedule field 'tile.3=1,-2': a tile size is negative");
  EXPECT_EQ(parse_error("place.4=L1"),
            "halide schedule field 'place.4=L1': placement must be inline, tile or root");
  EXPECT_EQ(parse_error("place.x=tile"),
            "halide schedule field 'place.x=tile': 'x' is not an integer");
  EXPECT_EQ(parse_error("reduce.-1=4"),
            "halide schedule field 'reduce.-1=4': value id -1 is negative");
  EXPECT_EQ(parse_error("colour=red"), "halide schedule field 'colour=red': unknown key 'colour'");
  EXPECT_EQ(parse_error("vector"), "halide schedule field 'vector': expected key=value");
  EXPECT_EQ(parse_error("tasks=-1"), "halide schedule field 'tasks=-1': tasks must be >= 0");
}

TEST(HalideTileConfig, LevelsBecomePlacements) {
  Graph g = parse_graph(kSoftmax);
  schedule::TileConfig c;
  c.tile = {4, 100};
  c.reduce_steps.resize(g.num_nodes());
  c.reduce_steps[0] = {16};
  c.reduce_steps[4] = {32};
  c.level.assign(g.num_values(), -1);
  c.level[g.find_value("m")] = 1;
  c.level[g.find_value("mb")] = 0;
  c.level[g.find_value("s")] = 0;
  c.level[g.find_value("e")] = 2;
  c.level[g.find_value("t")] = 3;
  c.level[g.find_value("tb")] = 0;
  c.vector_width = 8;
  c.parallel_dim = 0;
  c.parallel_tasks = 3;
  c.root = g.find_value("y");
  c.memory_level = 3;
  HalideSchedule s = halide_schedule_from_tile_config(g, c);
  EXPECT_EQ(s.tiles.at(g.find_value("y")), (std::vector<int64_t>{4, 100}));
  EXPECT_EQ(s.placement.at(g.find_value("m")), HalidePlacement::tile);
  EXPECT_EQ(s.placement.at(g.find_value("s")), HalidePlacement::inline_);
  EXPECT_EQ(s.placement.at(g.find_value("e")), HalidePlacement::tile);
  EXPECT_EQ(s.placement.at(g.find_value("t")), HalidePlacement::root);
  EXPECT_EQ(s.reduce_steps.at(g.find_value("m")), 16);
  EXPECT_EQ(s.reduce_steps.at(g.find_value("t")), 32);
  EXPECT_EQ(s.vector_width, 8);
  EXPECT_EQ(s.parallel_dim, 0);
  EXPECT_EQ(s.parallel_tasks, 3);  // 16 row tiles in 3 tasks of 6, the last guarded
  EXPECT_EQ(halide_matches(g, 5, &s), "");
  // One tile: nothing to run in parallel.
  c.parallel_dim = -1;
  EXPECT_EQ(halide_schedule_from_tile_config(g, c).parallel_dim, -2);
}

TEST(HalideTileConfig, ProjectsTheRootTileOntoOtherOutputs) {
  Graph g = parse_graph(R"(graph g(%x: f32[8,32]) {
  %m: f32[8,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %mb: f32[8,32] = prim.Broadcast(%m) {shape = [8, 32]}
  %y: f32[8,32] = prim.Elementwise(%x, %mb) {fn = "sub"}
  return %y, %m
})");
  schedule::SearchResult r =
      schedule::search_tiles(schedule::make_tile_graph(g), test_machine(), {.top_k = 1});
  ASSERT_EQ(r.configs.size(), 1u);
  schedule::TileConfig c = r.configs[0].config;
  c.tile = {2, 32};
  HalideSchedule s = halide_schedule_from_tile_config(g, c);
  EXPECT_EQ(s.tiles.at(g.find_value("y")), (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(s.tiles.at(g.find_value("m")), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(halide_matches(g, 6, &s), "");
}

TEST(HalideTileConfig, TopConfigsOfSoftmaxMatch) {
  Graph g = parse_graph(kSoftmax);
  schedule::SearchResult r =
      schedule::search_tiles(schedule::make_tile_graph(g), test_machine(), {.top_k = 2});
  ASSERT_FALSE(r.configs.empty()) << r.note;
  for (const schedule::ScoredConfig& sc : r.configs) {
    HalideSchedule s = halide_schedule_from_tile_config(g, sc.config);
    EXPECT_EQ(halide_matches(g, 7, &s), "") << halide_schedule_to_text(s);
  }
}

TEST(HalideTileConfig, ConfigOfAnotherKernelIsAnError) {
  Graph g = parse_graph(kSoftmax);
  schedule::TileConfig c;
  c.tile = {1, 100};
  try {
    halide_schedule_from_tile_config(g, c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "the tile config is for another kernel (0 values, 0 nodes; the kernel has 8, 7)");
  }
}

}  // namespace
}  // namespace orch::codegen
