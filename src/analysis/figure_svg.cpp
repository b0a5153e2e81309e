#include "figure_svg.h"

#include <fmt/format.h>

#include "strata/core/strings.h"

namespace strata::analysis {

std::string svg_head(std::int64_t width, std::int64_t height, const std::string& title, bool xlink) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\"{4} width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
      "<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<text x=\"{3}\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">{2}</text>\n",
      width, height, xml_escape(title), width / 2, xlink ? " xmlns:xlink=\"http://www.w3.org/1999/xlink\"" : "");
}

}  // namespace strata::analysis
