/*
 * formats/svg.c - SVG: XML escaping, the document frame, bars whose
 * touching intervals merge into one rectangle, and "nice" axis steps
 * (formats/formats.h); `ktrace timeline --svg` draws with them.
 */
#include <math.h>

#include "formats/formats.h"

void fmt_xml_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = fmt_utf8_seq(p);

		if (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
			n = 0; /* U+FFFE and U+FFFF are not XML characters */
		if (!n) { /* not UTF-8: as fmt_utf8() shows it */
			fprintf(out, "\\x%02x", *p++);
			continue;
		}
		if (*p == '<')
			fputs_unlocked("&lt;", out);
		else if (*p == '>')
			fputs_unlocked("&gt;", out);
		else if (*p == '&')
			fputs_unlocked("&amp;", out);
		else if (*p == '"')
			fputs_unlocked("&quot;", out);
		else if (*p >= 0x20 || n > 1)
			fwrite_unlocked(p, 1, n, out);
		p += n; /* control characters (not XML 1.0 characters) are dropped */
	}
}

void fmt_svg_begin(FILE *out, int width, double height, const char *title)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		     "viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
		width, height, width, height);
	fputs("<title>", out);
	fmt_xml_text(out, title);
	fprintf(out, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
		width, height);
}

void fmt_svg_end(FILE *out)
{
	fputs("</svg>\n", out);
}

void fmt_svg_bar_flush(FILE *out, struct fmt_svg_bar *b, double y, double h, const char *colour)
{
	if (!b->on)
		return;
	fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"/>\n", b->x0,
		y, b->x1 - b->x0 < 0.5 ? 0.5 : b->x1 - b->x0, h, colour);
	b->on = 0;
}

void fmt_svg_bar_add(FILE *out, struct fmt_svg_bar *b, double x0, double x1, double y, double h,
		     const char *colour)
{
	if (b->on && x0 <= b->x1 + 0.5) {
		if (x1 > b->x1)
			b->x1 = x1;
		return;
	}
	fmt_svg_bar_flush(out, b, y, h, colour);
	b->x0 = x0;
	b->x1 = x1;
	b->on = 1;
}

double fmt_tick_step(double span, int n)
{
	double raw = span / n, p = pow(10, floor(log10(raw > 0 ? raw : 1e-9))), m = raw / p;

	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}
