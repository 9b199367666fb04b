#pragma once
// The dashboard page served at `/`: web/dashboard.html with its CSS, uPlot and its script inlined,
// so the page makes no request but to the exporter itself (the CSP forbids anything else).

#include <string>

namespace sparkops::exporter {

// Assembled from the files embedded at build time. Pure.
std::string dashboard_page();

}  // namespace sparkops::exporter
