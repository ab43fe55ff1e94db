/*
 * tests/kft/cxx.cc - an instrumented C++ program for tests/kft_report.sh:
 * a class method (geo::Rect::area() const), a template instantiated twice,
 * std::sort (recursive introsort), and an exception thrown through two
 * frames and caught.  It includes <ktrace/ktrace.h>: the public header
 * must compile as C++.  It prints its own call counts.
 */
#include <ktrace/ktrace.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace geo {
struct Rect {
	double w, h;
	__attribute__((noinline)) double area() const { return w * h; }
};
} // namespace geo

static long n_area, n_total, n_thrower;

template <typename T> __attribute__((noinline)) T total(const std::vector<T> &v)
{
	n_total++;
	T s = T();
	for (const T &x : v)
		s += x;
	return s;
}

__attribute__((noinline)) void thrower(int depth)
{
	n_thrower++;
	if (depth == 0)
		throw std::runtime_error("deep");
	thrower(depth - 1);
}

int main()
{
	std::vector<int> v;
	std::vector<double> d;
	double a = 0;
	int caught = 0;

	for (int i = 0; i < 5; i++) {
		geo::Rect r = { 1.0 + i, 2.0 };
		a += r.area();
		n_area++;
	}
	for (int i = 0; i < 2000; i++)
		v.push_back((i * 7919) % 2003);
	std::sort(v.begin(), v.end());
	d.push_back(a);
	total(v);
	total(d);
	try {
		thrower(2);
	} catch (const std::exception &) {
		caught = 1;
	}
	std::printf("area %ld\ntotal %ld\nthrower %ld\ncaught %d\n", n_area, n_total, n_thrower, caught);
	return 0;
}
