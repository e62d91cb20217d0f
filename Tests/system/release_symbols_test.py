#!/usr/bin/env python3
"""ObjectGraph compiled as a release build refers only to symbols the toolchain's libraries export.

The test command builds in debug only, and a cold release build of the app is long here (a clean
clone's was at step 128 of 933 after six and a half minutes). Yet some code compiles to a reference
to a symbol that only the optimizer writes: stop 45's `ResultsObserver` held a
`SortDescriptor<Element>` in a struct, and in release the struct's copy code named the metadata of
`SortDescriptor.AllowedComparison`, a type Foundation does not export. Nothing that linked
ObjectGraph linked in release (the benchmarks' build failed), and no test noticed for a whole stop.

So this compiles ObjectGraph's sources alone as a release build does (`-O`, whole module), against
the modules the debug build just made, and checks every Swift symbol of the toolchain's modules that
the object file needs against the symbols the toolchain's shared libraries define: about two minutes.
It needs the debug build's plan (`.build/debug.yaml`), so it runs after `swift test`. Exits
non-zero, naming the symbols, on a reference nothing exports.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLCHAIN_LIBRARIES = "/opt/swift/usr/lib/swift/linux"
# Modules whose symbols the toolchain's shared libraries define: the standard library is `s` in a
# mangled name, the others are spelled out.
TOOLCHAIN_MODULES = {"Swift", "Foundation", "FoundationEssentials", "FoundationInternationalization",
                     "Observation", "Dispatch", "Synchronization", "_Concurrency"}
# Arguments of the debug compile that a release compile of the module alone drops (each listed with
# how many values follow it).
DROPPED = {"-Onone": 0, "-enable-testing": 0, "-incremental": 0, "-enable-batch-mode": 0,
           "-emit-dependencies": 0, "-emit-module": 0, "-serialize-diagnostics": 0, "-parseable-output": 0,
           "-emit-objc-header": 0, "-g": 0, "-DDEBUG": 0, "-output-file-map": 1,
           "-emit-module-path": 1, "-index-store-path": 1, "-emit-objc-header-path": 1, "-module-cache-path": 1}


def debug_compile_arguments():
    """The debug build's `swiftc` arguments for the ObjectGraph module, from its build plan."""
    with open(os.path.join(ROOT, ".build", "debug.yaml")) as plan:
        lines = plan.read().splitlines()
    for index, line in enumerate(lines):
        if re.match(r'\s*"C\.ObjectGraph-[^"]*-debug\.module":', line):
            for following in lines[index + 1:index + 12]:
                stripped = following.strip()
                if stripped.startswith("args: "):
                    return json.loads(stripped[len("args: "):])
    raise SystemExit("no compile command for the ObjectGraph module in .build/debug.yaml: run `swift build` first")


def release_arguments(debug, output, module_cache):
    arguments, skip, passed_on = [], 0, False
    for argument in debug:
        if skip:
            skip -= 1
            continue
        if passed_on:
            # The value of `-Xcc` or `-Xfrontend` (`-Xcc -g` is clang's, and stays).
            arguments.append(argument)
            passed_on = False
            continue
        if argument in ("-Xcc", "-Xfrontend", "-Xlinker"):
            arguments.append(argument)
            passed_on = True
            continue
        if argument in DROPPED:
            skip = DROPPED[argument]
            continue
        if re.fullmatch(r"-j\d+", argument):
            # The debug build's job count (`-j2`); the release compile sets its own threads.
            continue
        arguments.append(argument)
    return arguments + ["-O", "-whole-module-optimization", "-num-threads", "0",
                        "-module-cache-path", module_cache, "-o", output]


def mangled_module(symbol):
    """The module a Swift symbol (`$s…`) belongs to, when its mangling starts with one."""
    rest = symbol[2:]
    if rest.startswith("s") and not rest[1:2].isdigit():
        return "Swift"
    if rest.startswith("Sc"):
        return "_Concurrency"
    match = re.match(r"(\d+)", rest)
    if not match:
        return None
    length = int(match.group(1))
    return rest[len(match.group(1)):len(match.group(1)) + length]


def symbols(command):
    """The symbol names an `nm` command prints, one a line."""
    return set(subprocess.run(command, check=True, capture_output=True, text=True).stdout.split())


def main():
    with tempfile.TemporaryDirectory() as scratch:
        output = os.path.join(scratch, "ObjectGraph.o")
        arguments = release_arguments(debug_compile_arguments(), output, os.path.join(scratch, "ModuleCache"))
        print("Compiling ObjectGraph as a release build does (-O, whole module)…", flush=True)
        compiled = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True)
        if compiled.returncode != 0:
            # The toolchain's known harmless message is printed on success too; only the status counts.
            print(compiled.stdout[-4000:], compiled.stderr[-4000:])
            print("FAIL: ObjectGraph did not compile with -O")
            return 1
        needed = symbols(["nm", "-u", "--format=just-symbols", output])
        libraries = [os.path.join(TOOLCHAIN_LIBRARIES, name) for name in sorted(os.listdir(TOOLCHAIN_LIBRARIES))
                     if name.endswith(".so")]
        exported = set()
        for library in libraries:
            exported |= symbols(["nm", "-D", "--defined-only", "--format=just-symbols", library])
        # A conformance or an extension member that a package module (GRDB) adds to a toolchain type
        # is that module's to define, and it is built in debug here: such symbols are not checked.
        modules = os.path.join(ROOT, ".build", "debug", "Modules")
        package_modules = [name[:-len(".swiftmodule")] for name in os.listdir(modules)
                           if name.endswith(".swiftmodule") and name != "ObjectGraph.swiftmodule"]
        def names_a_package_module(symbol):
            return any(f"{len(name)}{name}" in symbol for name in package_modules)
        checked = [symbol for symbol in needed if symbol.startswith("$s") and mangled_module(symbol) in TOOLCHAIN_MODULES
                   and not names_a_package_module(symbol)]
        missing = sorted(symbol for symbol in checked if symbol not in exported)
        print(f"{len(checked)} symbols of the toolchain's modules needed, {len(missing)} not exported")
        if missing:
            demangled = subprocess.run(["swift-demangle"] + missing, capture_output=True, text=True).stdout
            print(demangled)
            print("FAIL: a release build of anything that links ObjectGraph would not link")
            return 1
        if not checked:
            print("FAIL: no symbol of the toolchain's modules was found to check: the check itself is broken")
            return 1
        print("OK")
        return 0


if __name__ == "__main__":
    sys.exit(main())
