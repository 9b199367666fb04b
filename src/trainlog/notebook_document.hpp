#pragma once
// A saved Jupyter notebook (.ipynb, nbformat 4) as the text its outputs showed: a training run in
// a notebook (Unsloth's and TRL's notebooks, the DGX Spark playbooks' JupyterLab) keeps its log in
// the cells' outputs, not in a file. Each output becomes text in cell order: a stream's text, an
// error's traceback, and a display's "text/html" (transformers' notebook progress bar and metrics
// table, utils/notebook.py) turned into the text a copy of the rendered page gives (notebook.hpp:
// the label line, table cells separated by tabs, one row per line), else its "text/plain".

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace sparkops::trainlog {

// True when the text (a file's beginning) is a notebook document: a JSON object whose "cells"
// list begins with a "cell_type" (or that names "nbformat").
bool looks_like_notebook(std::string_view head);

// The outputs' text. Errors (Errc::malformed): not valid JSON, or no "cells" list.
Result<std::string> notebook_output_text(std::string_view document);

// HTML as rendered text: tags dropped, table cells joined by tabs and rows ended by newlines, block
// ends (</div>, </p>, <br>) as newlines, the five named entities and numeric ones decoded; a '<'
// that opens no tag (notebook.py writes "02:10 < 03:02" unescaped) stays.
std::string html_as_text(std::string_view html);

}  // namespace sparkops::trainlog
