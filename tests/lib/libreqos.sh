# A LibreQoS data set of any size for import libreqos's round trip
# (tests/cli/import_libreqos.sh): lqos_generate DIR N [SEED] writes
# DIR/ShapedDevices.csv and DIR/network.json as LibreQoS operators have
# them, and DIR/expected.jsonl, one line per circuit with what the config
# must say: {"id", "parent" (node name, "" for none), "down": [min, max],
# "up": [min, max] (bytes/s), "ips": [prefixes as htbctl check prints them]}.
# The tree: 5 sites, 4 PoPs each, 6 APs per PoP (3 levels, 145 nodes;
# LQ_APS_PER_POP=50 gives an ISP's 1,000 APs);
# circuits mostly on APs, some on PoPs and sites, some without a parent;
# 20% with two devices, 5% with three; IPv4 (bare, /32, /30, two in one
# quoted field) and IPv6 (/56, bare); rates with and without decimals.
lqos_generate() {	# DIR N [SEED]
	local dir=$1 n=$2 seed=${3:-27}
	awk -v dir="$dir" -v n="$n" -v seed="$seed" -v apn="${LQ_APS_PER_POP:-6}" '
	function hex(v) { return sprintf("%x", v) }
	function rate_text(h) {	# hundredths of Mbps: "105", "2.5", "0.75", "155.50"
		if (h % 100 == 0 && rand() < 0.8) return sprintf("%d", h / 100)
		if (rand() < 0.5) return sprintf("%d.%02d", int(h / 100), h % 100)
		s = sprintf("%d.%02d", int(h / 100), h % 100); sub(/0$/, "", s); return s
	}
	function v4(    base, a, txt, canon, r) {
		base = n4++ * 4
		a = sprintf("100.%d.%d.%d", 64 + int(base / 65536), int(base / 256) % 256, base % 256)
		r = rand()
		if (r < 0.05) { txt = a "/30"; canon = a "/30" }
		else if (r < 0.2) { txt = a "/32"; canon = a "/32" }
		else { txt = a; canon = a "/32" }
		ips = ips (ips == "" ? "" : ",") "\"" canon "\""
		return txt
	}
	function v6(    h1, h2, txt) {
		h1 = 1 + int(n6 / 255); h2 = (1 + n6 % 255) * 256; n6++
		if (rand() < 0.1) {
			v = h1 * 256 + h2 / 256	# past 16 bits (n over 65,000): two groups
			txt = "2001:db8:ffff:" (v < 65536 ? hex(v) : hex(int(v / 65536)) ":" hex(v % 65536)) "::1"
			ips = ips (ips == "" ? "" : ",") "\"" txt "/128\""
			return txt
		}
		txt = "2001:db8:" hex(h1) ":" hex(h2) "::/56"
		ips = ips (ips == "" ? "" : ",") "\"" txt "\""
		return txt
	}
	BEGIN {
		srand(seed)
		csv = dir "/ShapedDevices.csv"; js = dir "/network.json"; ex = dir "/expected.jsonl"
		# network.json: nested nodes, tabs as LibreQoS'"'"'s example has them
		printf "{\n" > js
		for (s = 1; s <= 5; s++) {
			printf "\t\"Site_%d\": {\n\t\t\"downloadBandwidthMbps\": 10000,\n\t\t\"uploadBandwidthMbps\": 5000,\n\t\t\"type\": \"Site\",\n\t\t\"children\": {\n", s > js
			node[++nn] = "Site_" s
			for (p = 1; p <= 4; p++) {
				printf "\t\t\t\"PoP_%d_%d\": {\n\t\t\t\t\"downloadBandwidthMbps\": 2000,\n\t\t\t\t\"uploadBandwidthMbps\": 1000.5,\n\t\t\t\t\"type\": \"Site\",\n\t\t\t\t\"children\": {\n", s, p > js
				node[++nn] = "PoP_" s "_" p
				for (a = 1; a <= apn; a++) {
					printf "\t\t\t\t\t\"AP_%d_%d_%d\": {\"downloadBandwidthMbps\": %s, \"uploadBandwidthMbps\": 250, \"type\": \"AP\"}%s\n", s, p, a, (a % 2 ? "500" : "499.5"), (a < apn ? "," : "") > js
					ap[++nap] = "AP_" s "_" p "_" a
				}
				printf "\t\t\t\t}\n\t\t\t}%s\n", (p < 4 ? "," : "") > js
			}
			printf "\t\t}\n\t}%s\n", (s < 5 ? "," : "") > js
		}
		printf "}\n" > js
		print "# ShapedDevices.csv generated for htbctl import libreqos'"'"'s round trip" > csv
		print "# (tests/lib/libreqos.sh): " n " circuits" > csv
		print "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment,sqm" > csv
		split("2500 5000 10000 10500 15550 25000 100000", plan_down, " ")
		split("500 1000 2000 1800 2000 5000 50000", plan_up, " ")
		dev = 0
		for (c = 1; c <= n; c++) {
			r = rand()
			if (r < 0.96) parent = ap[1 + int(rand() * nap)]
			else if (r < 0.98) parent = node[1 + int(rand() * nn)]
			else if (r < 0.99) parent = "Site_" (1 + int(rand() * 5))
			else parent = ""
			k = 1 + int(rand() * 7)
			dmax = plan_down[k]; umax = plan_up[k]
			r = rand()
			if (r < 0.7) { dmin = 100; umin = 100 }
			else if (r < 0.9) { dmin = 50; umin = 25 }
			else { dmin = dmax; umin = umax }	# an SLA: min = max
			r = rand(); ndev = r < 0.75 ? 1 : r < 0.95 ? 2 : 3
			id = (c % 3 == 0) ? "CUST-" c : c
			name = "\"" c " Main St., Town " (c % 97) (c % 50 == 0 ? " \"\"annex\"\"" : "") "\""
			ips = ""
			dt = rate_text(dmin); ut = rate_text(umin); Dt = rate_text(dmax); Ut = rate_text(umax)
			for (d = 1; d <= ndev; d++) {
				dev++
				r = rand()
				f4 = ""; f6 = ""
				if (r < 0.9) {
					f4 = v4()
					if (rand() < 0.1) f4 = "\"" f4 ", " v4() "\""
				}
				if (r < 0.6 || r >= 0.9) f6 = v6()
				cm = (dev % 10 == 0) ? "plan " k ", business" : "plan " k
				sqm = (dev % 7 == 0) ? "cake/fq_codel" : ""
				printf "%s,%s,%d,CPE %d,%s,,%s,%s,%s,%s,%s,%s,%s,%s\n", id, name, dev, dev, parent, f4, f6, dt, ut, Dt, Ut, cm, sqm > csv
			}
			printf "{\"id\":\"%s\",\"parent\":\"%s\",\"down\":[%d,%d],\"up\":[%d,%d],\"ips\":[%s]}\n", id, parent, dmin * 1250, dmax * 1250, umin * 1250, umax * 1250, ips > ex
		}
	}'
}
