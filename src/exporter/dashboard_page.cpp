#include "exporter/dashboard_page.hpp"

#include <stdexcept>
#include <string_view>

namespace sparkops::embedded {
extern const std::string_view dashboard_html;
extern const std::string_view dashboard_css;
extern const std::string_view dashboard_js;
extern const std::string_view dashboard_uplot_js;
extern const std::string_view dashboard_uplot_css;
}  // namespace sparkops::embedded

namespace sparkops::exporter {

namespace {

void replace_marker(std::string& page, std::string_view marker, const std::string& with) {
  const auto at = page.find(marker);
  if (at == std::string::npos)
    throw std::logic_error("dashboard.html lacks " + std::string(marker));
  page.replace(at, marker.size(), with);
}

std::string inline_script(std::string_view js) {
  // A literal "</script" inside inlined code would end the element early.
  if (js.find("</script") != std::string_view::npos)
    throw std::logic_error("script contains </script");
  return "<script>\n" + std::string(js) + "\n</script>";
}

}  // namespace

std::string dashboard_page() {
  std::string page(embedded::dashboard_html);
  replace_marker(page, "<!--@STYLE@-->",
                 "<style>\n" + std::string(embedded::dashboard_uplot_css) + "\n" +
                     std::string(embedded::dashboard_css) + "\n</style>");
  replace_marker(
      page, "<!--@SCRIPT@-->",
      inline_script(embedded::dashboard_uplot_js) + "\n" + inline_script(embedded::dashboard_js));
  return page;
}

}  // namespace sparkops::exporter
