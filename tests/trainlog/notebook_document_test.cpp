// A saved notebook (.ipynb, nbformat 4) read for its outputs. The HTML below is what transformers
// utils/notebook.py writes: html_progress_bar's div (the label unescaped, "02:10 < 03:02") and
// text_to_html_table's table ("<th>" header cells, "{:.6f}" floats), stored as nbformat's list of
// lines under "text/html" beside the "text/plain" "<IPython.core.display.HTML object>".

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "trainlog/notebook_document.hpp"
#include "trainlog/parse_log.hpp"

namespace sparkops::trainlog {
namespace {

constexpr std::string_view kBarAndTable =
    "\n    <div>\n      \n      <progress value='25' max='60' style='width:300px; height:20px; "
    "vertical-align: middle;'></progress>\n      [25/60 02:10 < 03:02, 0.19 it/s, Epoch "
    "0.40/1]\n    </div>\n    <table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr "
    "style=\"text-align: left;\">\n      <th>Step</th>\n      <th>Training Loss</th>\n    "
    "</tr>\n  </thead>\n  <tbody>\n    <tr>\n      <td>1</td>\n      <td>1.815900</td>\n    "
    "</tr>\n    <tr>\n      <td>2</td>\n      <td>2.283100</td>\n    </tr>\n  "
    "</tbody>\n</table><p>";

std::string notebook(std::string_view html) {
  nlohmann::json cells = nlohmann::json::array();
  cells.push_back({{"cell_type", "code"},
                   {"outputs",
                    {{{"output_type", "stream"},
                      {"name", "stdout"},
                      {"text",
                       {"==((====))==  Unsloth 2025.3.19: Fast Llama patching.\n",
                        "GPU: NVIDIA GB10. Max memory: 119.7 GB.\n"}}}}},
                   {"source", {"from unsloth import FastLanguageModel\n"}}});
  cells.push_back({{"cell_type", "code"},
                   {"outputs",
                    {{{"output_type", "display_data"},
                      {"data",
                       {{"text/html", {std::string(html)}},
                        {"text/plain", {"<IPython.core.display.HTML object>"}}}}}}},
                   {"source", {"trainer.train()"}}});
  cells.push_back({{"cell_type", "markdown"}, {"source", {"# notes"}}});
  return nlohmann::json{{"cells", cells},
                        {"metadata", nlohmann::json::object()},
                        {"nbformat", 4},
                        {"nbformat_minor", 5}}
      .dump(1);
}

TEST(NotebookHtml, ProgressBarAndTableReadAsACopyOfThePage) {
  EXPECT_EQ(html_as_text(kBarAndTable),
            "[25/60 02:10 < 03:02, 0.19 it/s, Epoch 0.40/1]\n"
            "Step\tTraining Loss\n"
            "1\t1.815900\n"
            "2\t2.283100\n");
}

TEST(NotebookHtml, EntitiesAndCutOffTags) {
  EXPECT_EQ(html_as_text("<p>a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39; &unknown;</p>"),
            "a <b> & \"c\" 'd' &unknown;\n");
  // "< " opens no tag and stays; a tag cut off before its ">" ends the text.
  EXPECT_EQ(html_as_text("x < 3 <b class='"), "x < 3\n");
  EXPECT_EQ(html_as_text(""), "");
}

TEST(NotebookDocument, OutputsInCellOrder) {
  const auto text = notebook_output_text(notebook(kBarAndTable));
  ASSERT_TRUE(text) << text.error().detail;
  EXPECT_EQ(*text,
            "==((====))==  Unsloth 2025.3.19: Fast Llama patching.\n"
            "GPU: NVIDIA GB10. Max memory: 119.7 GB.\n"
            "[25/60 02:10 < 03:02, 0.19 it/s, Epoch 0.40/1]\n"
            "Step\tTraining Loss\n"
            "1\t1.815900\n"
            "2\t2.283100\n");
}

TEST(NotebookDocument, WhatIsNotANotebook) {
  EXPECT_FALSE(notebook_output_text("{\"cells\": ["));
  EXPECT_FALSE(notebook_output_text("{\"metadata\": {}}"));
  EXPECT_FALSE(notebook_output_text("[1, 2]"));
  EXPECT_FALSE(looks_like_notebook("{\"log_history\": [{\"loss\": 1.0}]}"));  // trainer_state
  EXPECT_FALSE(looks_like_notebook("step 1 | loss 2.0 | dt: 10ms"));
  EXPECT_TRUE(looks_like_notebook(notebook(kBarAndTable).substr(0, 200)));
}

TEST(NotebookDocument, AnalyzeReadsTheRunFromTheOutputs) {
  const auto s = parse_log_text(notebook(kBarAndTable), ParseOptions{}, std::nullopt, "t.ipynb");
  ASSERT_TRUE(s) << s.error().detail;
  EXPECT_EQ(s->format, LogFormat::notebook);
  ASSERT_EQ(s->steps.size(), 2u);
  EXPECT_DOUBLE_EQ(*s->steps[1].loss, 2.2831);
  ASSERT_TRUE(s->train_runtime_seconds);
  EXPECT_DOUBLE_EQ(*s->train_runtime_seconds / 2.0, 130.0 / 25.0);  // the label's mean per step
}

TEST(NotebookDocument, ABrokenNotebookIsOneErrorNamingTheInput) {
  const auto s = parse_log_text("{\"cells\": [{\"cell_type\": \"code\", \"outputs\": [", {},
                                std::nullopt, "t.ipynb");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, Errc::malformed);
  EXPECT_NE(s.error().detail.find("t.ipynb"), std::string::npos) << s.error().detail;
}

}  // namespace
}  // namespace sparkops::trainlog
