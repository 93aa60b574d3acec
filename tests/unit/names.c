/* SPDX-License-Identifier: MIT */
/* Unit tests of lib/names.c: short C++ names, as g++ and clang++ demangle them, and numbers for
 * those that collide. */
#include "names.h"
#include "unit.h"

#include <stdlib.h>

static void shortens(const char *full, const char *want)
{
	char *got = name_short(full);

	EXPECT_STR(want, got, "name_short(\"%s\")", full);
	free(got);
}

static void plain(void)
{
	shortens("main", "main");
	shortens("c_linkage", "c_linkage");
	shortens("main.cold", "main.cold");
	shortens("libfoo.so+0x1a2b", "libfoo.so+0x1a2b");
	shortens("", "");
	shortens("geo::Mesh::refine(int)", "geo::Mesh::refine");
	shortens("geo::Mesh::refine(int, double) const", "geo::Mesh::refine");
	shortens("geo::Shape::area() const", "geo::Shape::area");
	shortens("geo::util::scale(double)", "geo::util::scale");
	shortens("geo::Box<int>::~Box()", "geo::Box::~Box");
}

static void operators(void)
{
	shortens("std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > "
		 ">::operator[](int const&)",
		 "std::map::operator[]");
	shortens("std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > "
		 ">::operator[](int&&)",
		 "std::map::operator[]");
	shortens("geo::Vec::operator()(int) const", "geo::Vec::operator()");
	shortens("geo::Vec::operator()() const", "geo::Vec::operator()");
	shortens("std::less<int>::operator()(int const&, int const&) const",
		 "std::less::operator()");
	shortens("geo::operator<<(_IO_FILE*, geo::Vec const&)", "geo::operator<<");
	shortens("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
		 "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, "
		 "char "
		 "const*)",
		 "std::operator<<");
	shortens("geo::Vec::operator<(geo::Vec const&) const", "geo::Vec::operator<");
	shortens(
		"bool std::operator< <char, std::char_traits<char>, std::allocator<char> "
		">(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
		"const&, char const*)",
		"std::operator<");
	shortens("geo::Vec::operator>(geo::Vec const&) const", "geo::Vec::operator>");
	shortens("geo::Vec::operator>>=(int)", "geo::Vec::operator>>=");
	shortens("geo::Vec::operator<=>(geo::Vec const&) const", "geo::Vec::operator<=>");
	shortens("geo::Vec::operator->() const", "geo::Vec::operator->");
	shortens("geo::Vec::operator->*(int geo::Vec::*)", "geo::Vec::operator->*");
	shortens("geo::Vec::operator,(int)", "geo::Vec::operator,");
	shortens("geo::Vec::operator bool() const", "geo::Vec::operator bool");
	shortens("geo::Vec::operator std::vector<int, std::allocator<int> >() const",
		 "geo::Vec::operator std::vector");
	shortens("geo::Vec::operator char const*() const", "geo::Vec::operator char const*");
	shortens("operator new(unsigned long, void*)", "operator new");
	shortens("operator delete[](void*)", "operator delete[]");
	shortens("operator\"\" _km(unsigned long long)", "operator\"\" _km");
	shortens("std::_Rb_tree_iterator<std::pair<int const, int> >::operator++()",
		 "std::_Rb_tree_iterator::operator++");
	shortens("geo::operator_helper(int)", "geo::operator_helper");
	shortens("my_operator<int>(int)", "my_operator");
}

static void lambdas(void)
{
	shortens("main::{lambda(int)#1}::operator()(int) const", "main::{lambda#1}::operator()");
	shortens("main::{lambda()#2}::operator()() const", "main::{lambda#2}::operator()");
	shortens("std::_Function_handler<int (int), "
		 "main::{lambda(int)#2}>::_M_invoke(std::_Any_data "
		 "const&, int&&)",
		 "std::_Function_handler::_M_invoke");
	shortens("main::{lambda(int)#2} const& std::_Any_data::_M_access<main::{lambda(int)#2}>() "
		 "const",
		 "std::_Any_data::_M_access");
	shortens("work(int)::{lambda(auto:1)#1}::operator()<int>(int) const",
		 "work::{lambda#1}::operator()");
	shortens("geo::run()::Local::step() const", "geo::run::Local::step");
	shortens("geo::run() const::Local::step()", "geo::run::Local::step");
	shortens("foo::{unnamed type#1}::bar()", "foo::{unnamed type#1}::bar");
}

static void templates(void)
{
	shortens(
		"geo::Box<std::pair<int, std::vector<std::map<int, int, std::less<int>, "
		"std::allocator<std::pair<int const, int> > >, std::allocator<std::map<int, int, "
		"std::less<int>, std::allocator<std::pair<int const, int> > > > > > >::get() const",
		"geo::Box::get");
	shortens("int twice<int>(int)", "twice");
	shortens("double twice<double>(double)", "twice");
	shortens("unsigned long long geo::count<unsigned long long>(unsigned long long)",
		 "geo::count");
	shortens("int const* std::__miter_base<int const*>(int const*)", "std::__miter_base");
	shortens(
		"main::{lambda(int)#2}&& std::forward<main::{lambda(int)#2}>(std::remove_reference<"
		"main::{lambda(int)#2}>::type&)",
		"std::forward");
	shortens("std::function<int (std::vector<int, std::allocator<int> >)>::operator()(std::"
		 "vector<int, std::allocator<int> >) const",
		 "std::function::operator()");
	shortens("std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (*)(int), int> > "
		 ">::_M_run()",
		 "std::thread::_State_impl::_M_run");
	shortens("decltype (({parm#1}.begin)()) std::begin<std::vector<int, std::allocator<int> > "
		 ">(std::vector<int, std::allocator<int> >&)",
		 "std::begin");
	shortens("std::__uniq_ptr_impl<geo::Mesh, std::default_delete<geo::Mesh> >::_M_ptr() const",
		 "std::__uniq_ptr_impl::_M_ptr");
	shortens("geo::less<((3)>(2))>()", "geo::less");
}

static void qualifiers(void)
{
	shortens("(anonymous namespace)::hidden(int)", "(anonymous namespace)::hidden");
	shortens("geo::(anonymous namespace)::Cache::get() const",
		 "geo::(anonymous namespace)::Cache::get");
	shortens("apply(int (*)(int), int)", "apply");
	shortens("apply(int (*)(int), int) [clone .cold]", "apply");
	shortens("geo::on(void (geo::Vec::*)(int) const, double (&) [3])", "geo::on");
	shortens("label[abi:cxx11](int)", "label");
	shortens("geo::Mesh::name[abi:cxx11]() const", "geo::Mesh::name");
	shortens("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
		 ">::c_str() const",
		 "std::__cxx11::basic_string::c_str");
	shortens("geo::Vec::take() &&", "geo::Vec::take");
	shortens("geo::Vec::take() const &", "geo::Vec::take");
	shortens("geo::Vec::take() const volatile &&", "geo::Vec::take");
	shortens("geo::Vec::take() const [clone .constprop.0] [clone .isra.0]", "geo::Vec::take");
	shortens("non-virtual thunk to geo::Derived::run()", "geo::Derived::run");
}

static void unreadable(void)
{
	/* brackets that do not pair: the name as it is */
	shortens("geo::Box<int::get()", "geo::Box<int::get()");
	shortens("geo::f(int))", "geo::f(int))");
	shortens("geo::f{(int)", "geo::f{(int)");
}

static void shown(const char *const *full, size_t n, int shorten, const char *const *want)
{
	char **got = names_shown(full, n, shorten);

	for (size_t i = 0; i < n; i++)
		EXPECT_STR(want[i], got ? got[i] : NULL,
			   "names_shown(%zu names, %d)[%zu] of \"%s\"", n, shorten, i, full[i]);
	names_free(got, n);
}

static void apart(void)
{
	static const char *const full[] = {
		"geo::util::scale(int)",	"main", "geo::util::scale(double)",
		"geo::util::scale(long)",	"main", "int twice<int>(int)",
		"double twice<double>(double)",
	};
	static const char *const want[] = {
		"geo::util::scale#2",
		"main",
		"geo::util::scale",
		"geo::util::scale#3",
		"main#2",
		"twice#2",
		"twice",
	};

	shown(full, 7, 1, want);
	shown(full, 7, 0, full); /* full names: as they are, equal ones too */
	shown(NULL, 0, 1, NULL);
}

void unit_names(void)
{
	plain();
	operators();
	lambdas();
	templates();
	qualifiers();
	unreadable();
	apart();
}
