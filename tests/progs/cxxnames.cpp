// SPDX-License-Identifier: MIT
// C++ names that are hard to shorten: operators, lambdas, ABI tags, nested templates, an
// anonymous namespace, a function pointer parameter, && and const & overloads, and two template
// instances that share a short name. Each is called a number of times of its own.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "progs.h"

static volatile long cxx_sink;

namespace geo
{

struct Vec {
	int x;
	NOINLINE int operator()(int k) const
	{
		cxx_sink = cxx_sink + k;
		return x * k;
	}
	NOINLINE bool operator<(const Vec &o) const
	{
		cxx_sink = cxx_sink + 1;
		return x < o.x;
	}
	NOINLINE int take() &&
	{
		cxx_sink = cxx_sink + 2;
		return x;
	}
	NOINLINE int take() const &
	{
		cxx_sink = cxx_sink + 3;
		return x;
	}
	NOINLINE explicit operator bool() const
	{
		cxx_sink = cxx_sink + 4;
		return x != 0;
	}
};

NOINLINE std::FILE *operator<<(std::FILE *f, const Vec &v)
{
	cxx_sink = cxx_sink + v.x;
	return f;
}

template <typename T> struct Box {
	T v;
	NOINLINE const T &get() const
	{
		cxx_sink = cxx_sink + 5;
		return v;
	}
};

} // namespace geo

namespace
{
NOINLINE int hidden(int v)
{
	cxx_sink = cxx_sink + v;
	return v;
}
} // namespace

NOINLINE int apply(int (*fn)(int), int v)
{
	return fn(v);
}

NOINLINE std::string label(int v)
{
	cxx_sink = cxx_sink + v;
	return v ? "x" : "";
}

template <typename T> NOINLINE T twice(T v)
{
	cxx_sink = cxx_sink + 1;
	return v + v;
}

int main()
{
	geo::Vec a{2}, b{3};
	geo::Box<std::pair<int, std::vector<std::map<int, int>>>> box{};
	auto lam = [&](int k) { return a(k) + 1; };
	long total = 0;

	for (int i = 0; i < 2; i++)
		total += lam(i); /* lambda 2, Vec::operator() 2 */
	for (int i = 0; i < 3; i++)
		total += a < b; /* 3 */
	for (int i = 0; i < 4; i++)
		total += geo::Vec{i}.take(); /* && 4 */
	for (int i = 0; i < 5; i++)
		total += a.take(); /* const & 5 */
	for (int i = 0; i < 6; i++)
		total += static_cast<bool>(a); /* 6 */
	for (int i = 0; i < 7; i++)
		stdout << a; /* 7 */
	for (int i = 0; i < 8; i++)
		total += box.get().first; /* 8 */
	for (int i = 0; i < 9; i++)
		total += apply(hidden, i); /* apply 9, hidden 9 */
	for (int i = 0; i < 10; i++)
		total += (long)label(i).size(); /* 10 */
	for (int i = 0; i < 11; i++)
		total += twice<int>(i); /* 11 */
	for (int i = 0; i < 12; i++)
		total += (long)twice<double>(i); /* 12 */
	std::printf("total %ld\n", total);
	return 0;
}
