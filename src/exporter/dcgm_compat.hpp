#pragma once
// `serve --dcgm-compat`: the figures sparkops already has, also under the names, types, units and
// labels of NVIDIA dcgm-exporter (checked against its etc/default-counters.csv and
// internal/pkg/rendermetrics/render_metrics.go at tag 4.5.3-4.8.2), so a DCGM Grafana dashboard
// keeps working on a GB10, where dcgm-exporter's framebuffer fields are unregistered.
//
// Units are DCGM's, not Prometheus base units: MHz, C, W, mJ, %, MiB, ns. Labels, in DCGM's order:
// gpu, UUID, pci_bus_id, device ("nvidia<gpu>"), modelName, Hostname (when known),
// DCGM_FI_DRIVER_VERSION (when known). A figure the GPU does not report is omitted, as elsewhere.
//
// Framebuffer fields: from the device's own memory info on a discrete GPU (reserved = total - used
// - free). On a single unified-memory GPU that reports none (GB10) they describe the pool:
// FB_FREE = available (MemAvailable: what a new job can have once page cache is reclaimed, not
// CUDA's MemFree), FB_RESERVED = huge pages, FB_USED = the rest of MemTotal. With several GPUs
// and no per-device memory the pool is not split between them and the fields are omitted.

#include <string_view>
#include <vector>

#include "exporter/metric_catalogue.hpp"
#include "exporter/prom_text.hpp"
#include "status/status_report.hpp"

namespace sparkops::exporter {

enum class DcgmCompat { off, on };

// The DCGM families sparkops can fill; `labels` lists DCGM's label names. Pure data.
const std::vector<MetricDef>& dcgm_catalogue();

// Families for `report`, in dcgm_catalogue() order; families with no sample are left out.
std::vector<MetricFamily> dcgm_metric_families(const status::StatusReport& report);

}  // namespace sparkops::exporter
