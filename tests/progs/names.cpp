// SPDX-License-Identifier: MIT
// C++ names: a const method and overloads in namespaces, and an extern "C" function.
#include <cstdio>

#include "progs.h"

static volatile double names_sink;

namespace geo
{

struct Shape {
	int w, h;
	int area() const;
};

NOINLINE int Shape::area() const
{
	names_sink = names_sink + 1;
	return w * h;
}

namespace util
{

NOINLINE int scale(int v)
{
	names_sink = names_sink + v;
	return 2 * v;
}

NOINLINE double scale(double v)
{
	names_sink = names_sink + v;
	return 2 * v;
}

} // namespace util
} // namespace geo

extern "C" NOINLINE int c_linkage(int v) /* line: c_linkage */
{
	names_sink = names_sink + v;
	return v + 1;
}

int main()
{
	geo::Shape s{3, 4};
	long total = 0;

	for (int i = 0; i < 3; i++)
		total += s.area();
	for (int i = 0; i < 2; i++)
		total += geo::util::scale(i);
	for (int i = 0; i < 4; i++)
		total += (long)geo::util::scale(0.5 * i);
	total += c_linkage(41);
	std::printf("total %ld\n", total);
	return 0;
}
