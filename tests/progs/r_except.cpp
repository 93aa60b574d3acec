// SPDX-License-Identifier: MIT
// C++ exceptions through instrumented frames: a throw caught three frames
// up, a catch-and-rethrow in the middle, and an exception from the
// constructor of a function-local static (whose construction is then tried
// again). After every catch probe() is called at a depth the program knows
// (main 0, catcher 1, probe 2). Prints "calls NAME=N ..." for what it counts.
#include <cstdio>
#include <stdexcept>

#include "progs.h"

static unsigned long n_catcher, n_t1, n_t2, n_t3, n_probe, n_rethrower, n_ctor, n_get, n_caught;
volatile unsigned long except_sink;

NOINLINE void probe()
{
	n_probe++;
	except_sink++;
}

NOINLINE void t3(int v)
{
	n_t3++;
	if (v >= 0)
		throw std::runtime_error("t3");
	except_sink++;
}

NOINLINE void t2(int v)
{
	n_t2++;
	t3(v);
	except_sink++;
}

NOINLINE void t1(int v)
{
	n_t1++;
	t2(v);
	except_sink++;
}

// Catches what t1 -> t2 -> t3 throws, rethrows it.
NOINLINE void rethrower(int v)
{
	n_rethrower++;
	try {
		t1(v);
	} catch (...) {
		except_sink++;
		throw;
	}
}

struct Widget {
	int value;
	NOINLINE Widget()
	{
		n_ctor++;
		if (n_ctor == 1)
			throw std::logic_error("first construction fails");
		value = 42;
	}
};

NOINLINE Widget &get_widget()
{
	n_get++;
	static Widget w;
	return w;
}

NOINLINE void catcher(int kind)
{
	n_catcher++;
	try {
		if (kind == 0)
			t1(1);
		else if (kind == 1)
			rethrower(1);
		else if (kind == 2)
			except_sink += (unsigned long)get_widget().value;
		else
			t1(-1); // returns normally
	} catch (const std::exception &) {
		n_caught++;
	}
	probe();
}

int main()
{
	catcher(0);
	catcher(1);
	catcher(2); // the static's constructor throws
	catcher(2); // and is run again, and works
	catcher(3);
	catcher(0);
	std::printf("caught=%lu widget=%d\n", n_caught, get_widget().value);
	std::printf("calls catcher=%lu t1=%lu t2=%lu t3=%lu probe=%lu rethrower=%lu "
		    "Widget::Widget()=%lu get_widget()=%lu\n",
		    n_catcher, n_t1, n_t2, n_t3, n_probe, n_rethrower, n_ctor, n_get);
	return 0;
}
