/* SPDX-License-Identifier: MIT */
/* Region names for people: C++ signatures shortened to their qualified names, kept apart. */
#ifndef SCOPE_LIB_NAMES_H
#define SCOPE_LIB_NAMES_H

#include <stddef.h>

/*
 * The short form of a demangled name: the namespaces, classes and function
 * name it is qualified by, without the return type, parameter lists,
 * template arguments, const/volatile/& qualifiers, ABI tags and
 * "[clone ...]" suffixes:
 *
 *   std::map<int, int>::operator[](int const&)           std::map::operator[]
 *   bool std::operator< <char>(std::string const&, ...)   std::operator<
 *   main::{lambda(int)#1}::operator()(int) const          main::{lambda#1}::operator()
 *   (anonymous namespace)::hidden(int)                    (anonymous namespace)::hidden
 *   label[abi:cxx11](int)                                 label
 *
 * A name that is not C++ (main, lib.so+0x1a2b) is its own short form, and so
 * is one it cannot read (brackets that do not pair): nothing is ever cut in
 * the middle. Returns a new string, NULL when out of memory.
 */
char *name_short(const char *full);

/*
 * The names to show for n regions named full[0..n-1]: with shorten, each
 * region's short form, and when two or more share one, the one whose full
 * name sorts first (byte order, then by index) keeps it and the others get
 * "#2", "#3"... in that order (geo::scale, geo::scale#2); without shorten,
 * copies of the full names. Returns n new strings in a new array (free with
 * names_free), NULL when out of memory.
 */
char **names_shown(const char *const *full, size_t n, int shorten);
void names_free(char **names, size_t n);

#endif
