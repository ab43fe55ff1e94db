#!/bin/sh
# tests/cli_plugin.sh - the exporters that need big libraries live in
# ktrace-export.so, loaded by `ktrace export` when it writes their formats
# (formats/plugin.h, issue 33): the ktrace binary does not name
# libbabeltrace2, libprotobuf-c, libtracecmd or libaudit (readelf, its
# DT_NEEDED) and a command that does not export does not load them
# (LD_DEBUG=files, the dynamic loader's own list); Perfetto and CTF exports
# load the plugin and babeltrace2 reads the CTF; a missing or foreign
# plugin is one line naming it and exit status 1, while the formats that
# need no plugin still work.
. "$KTRACE_SRC/tests/helpers/tap.sh"
cd "$T" || exit 1
san_preload

needed=$(readelf -d "$KTRACE" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | paste -sd' ')
for lib in libbabeltrace2 libprotobuf-c libtracecmd libaudit; do
	case " $needed " in
	*" $lib."*) ok 1 "ktrace does not link $lib (DT_NEEDED: $needed)" ;;
	*) ok 0 "ktrace does not link $lib" ;;
	esac
done
is "$(readelf -d "$KTRACE_BUILD/ktrace-export.so" | grep -c 'Shared library: \[lib\(babeltrace2\|protobuf-c\|tracecmd\)\.')" 3 \
	"ktrace-export.so links libbabeltrace2, libprotobuf-c and libtracecmd"
is "$(nm -D --defined-only "$KTRACE_BUILD/ktrace-export.so" | awk '{ print $3 }' | sort | paste -sd' ')" \
	"ktrace_export_plugin tracecmd_warning" "the plugin exports its table (and libtracecmd's warning hook) only"

cc -O1 -finstrument-functions -o shapes "$KTRACE_SRC/tests/kft/shapes.c"
run "$KTRACE" record -q -o tr ./shapes
ok $rc "record a small trace"
LD_DEBUG=files "$KTRACE" info tr >/dev/null 2>ld.txt
unlike ld.txt 'file=lib(babeltrace2|protobuf-c|tracecmd|audit|glib-2\.0)\.' \
	"ktrace info loads none of the exporters' libraries"
LD_DEBUG=files "$KTRACE" export --format=perfetto -o tr.pftrace tr 2>ld.txt
like ld.txt 'file=.*ktrace-export\.so' "export --format=perfetto loads ktrace-export.so"
ok "$([ -s tr.pftrace ]; echo $?)" "... and writes the Perfetto trace"
run "$KTRACE" export --format=ctf -o ctf tr
ok $rc "export --format=ctf through the plugin"
babeltrace2 ctf >bt.txt 2>&1
like bt.txt 'lttng_ust_cyg_profile:func_entry' "babeltrace2 reads the CTF it wrote"

KTRACE_EXPORT_PLUGIN=$T/none.so "$KTRACE" export --format=perfetto -o p2 tr >out 2>err
is "$?:$(lines err)" "1:1" "a missing plugin: exit 1, one line"
like err "^ktrace export: cannot find ktrace-export\.so" "... that names the plugin"
ok "$([ ! -e p2 ]; echo $?)" "... and no output is left"
KTRACE_EXPORT_PLUGIN=$KTRACE_BUILD/libktrace.so.0 "$KTRACE" export --format=ctf -o c2 tr >out 2>err
is "$?:$(lines err)" "1:1" "a shared object that is not the plugin: exit 1, one line"
like err "libktrace\.so\.0: not the export plugin of this ktrace" "... naming it"
KTRACE_EXPORT_PLUGIN=$T/none.so "$KTRACE" export --format=json -o t.json tr >out 2>err
ok $? "chrome JSON needs no plugin: written without one"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' t.json
ok $? "... and is valid JSON"
done_testing
