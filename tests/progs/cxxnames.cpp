// SPDX-License-Identifier: MIT
// C++ names that are hard to shorten: operators, lambdas, ABI tags, nested templates, an
// anonymous namespace, a function pointer parameter, && and const & overloads, and two template
// instances that share a short name. Each is called a number of times of its own; with "spin",
// two instances of a template burn CPU time for the samples.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
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

namespace geo
{
// Burns about ms of the thread's CPU time: two instances, for samples to land in.
template <typename T> NOINLINE T spin(T v, long ms)
{
	struct timespec ts;
	long long until;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	until = ts.tv_sec * 1000000000LL + ts.tv_nsec + ms * 1000000LL;
	do {
		for (int i = 0; i < 100000; i++)
			cxx_sink = cxx_sink + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec * 1000000000LL + ts.tv_nsec < until);
	return v;
}
} // namespace geo

// cxxnames [spin MS]: with spin, only geo::spin<int> and geo::spin<double>, MS ms of CPU each.
int main(int argc, char **argv)
{
	if (argc > 2 && std::strcmp(argv[1], "spin") == 0) {
		long ms = std::atol(argv[2]);
		std::printf("spun %d %g\n", geo::spin<int>(0, ms), geo::spin<double>(0, ms));
		return 0;
	}

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
