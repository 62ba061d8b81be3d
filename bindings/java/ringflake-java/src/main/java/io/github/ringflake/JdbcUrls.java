package io.github.ringflake;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * JDBC URLs as a Spring {@code DataSource} spells them, turned into the crate's URL forms
 * ({@code mysql://user:password@host:3306/db?ssl-mode=…&ssl-ca=…},
 * {@code postgres://user:password@host:5432/db?sslmode=…&sslrootcert=…}).
 *
 * <p>Read: the host, port and database; {@code user} and {@code password}; TLS as Connector/J
 * ({@code sslMode}, {@code useSSL}, {@code requireSSL}, {@code verifyServerCertificate}), MariaDB
 * Connector/J ({@code sslMode=disable|trust|verify-ca|verify-full}, {@code serverSslCert}) and
 * pgJDBC ({@code ssl}, {@code sslmode}, {@code sslrootcert}) set it. The drivers' other
 * parameters (time zones, character sets, pool sizes…) do not matter to a worker id claim and
 * are ignored; TLS settings that have no equivalent here (key stores, client certificates, SSL
 * factories) are refused rather than ignored. The crate's own forms pass through unchanged.
 */
final class JdbcUrls {
    private JdbcUrls() {}

    /** Parameters refused: they change how TLS is done in ways the crate cannot follow. */
    private static final Set<String> REFUSED = Set.of(
            "trustcertificatekeystoreurl", "clientcertificatekeystoreurl", "keystore",
            "truststore", "sslcert", "sslkey", "sslfactory", "sslpassword", "sslfactoryarg");

    /** {@code ["mysql" | "postgres", crate URL]}. */
    static String[] toCrate(String url, String user, String password) {
        if (url == null || url.isEmpty()) {
            throw config("jdbcUrl is empty: expected jdbc:mysql://, jdbc:mariadb:// or jdbc:postgresql://");
        }
        if (url.startsWith("mysql://")) {
            return new String[] {"mysql", url};
        }
        if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
            return new String[] {"postgres", url};
        }
        String kind;
        String rest;
        if (url.startsWith("jdbc:mysql://")) {
            kind = "mysql";
            rest = url.substring("jdbc:mysql://".length());
        } else if (url.startsWith("jdbc:mariadb://")) {
            kind = "mysql";
            rest = url.substring("jdbc:mariadb://".length());
        } else if (url.startsWith("jdbc:postgresql://")) {
            kind = "postgres";
            rest = url.substring("jdbc:postgresql://".length());
        } else {
            throw config("unsupported URL " + redact(url)
                    + ": expected jdbc:mysql://, jdbc:mariadb:// or jdbc:postgresql:// (or the crate's"
                    + " mysql:// and postgres:// forms)");
        }
        String query = "";
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String hostPort = slash >= 0 ? rest.substring(0, slash) : rest;
        String database = slash >= 0 ? rest.substring(slash + 1) : "";
        if (hostPort.contains(",")) {
            throw config("URL " + redact(url) + " names several hosts (" + hostPort
                    + "): give the primary's address (one host)");
        }
        if (hostPort.contains("@")) {
            throw config("URL " + redact(url) + " has credentials before the host: give user= and"
                    + " password= parameters, or call jdbcUrl(url, user, password)");
        }
        if (database.isEmpty()) {
            throw config("URL " + redact(url) + " names no database: expected …://host:port/database");
        }
        String host = hostPort.isEmpty() ? "localhost" : hostPort;
        String defaultPort = kind.equals("mysql") ? ":3306" : ":5432";
        if (!host.startsWith("[") ? !host.contains(":") : !host.contains("]:")) {
            host = host + defaultPort;
        }
        Map<String, String> params = new LinkedHashMap<>();
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = eq >= 0 ? pair.substring(0, eq) : pair;
            String v = eq >= 0 ? URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8) : "";
            if (REFUSED.contains(k.toLowerCase(Locale.ROOT))) {
                throw config("URL parameter " + k + " is not supported: give the server's CA as a PEM"
                        + " file with " + (kind.equals("mysql") ? "serverSslCert= or ssl-ca=" : "sslrootcert=")
                        + " (or the builder's dbCaFile)");
            }
            params.put(k, v);
        }
        String u = user != null ? user : params.get("user");
        String p = password != null ? password : params.get("password");
        if (u == null || u.isEmpty()) {
            throw config("URL " + redact(url) + " names no user: add user= or call jdbcUrl(url, user, password)");
        }
        StringBuilder out = new StringBuilder(kind.equals("mysql") ? "mysql://" : "postgres://");
        out.append(encode(u, false));
        if (p != null) {
            out.append(':').append(encode(p, false));
        }
        out.append('@').append(host).append('/').append(database);
        Map<String, String> tls = kind.equals("mysql") ? mysqlTls(params) : postgresTls(params);
        char sep = '?';
        for (Map.Entry<String, String> e : tls.entrySet()) {
            out.append(sep).append(e.getKey()).append('=').append(encode(e.getValue(), true));
            sep = '&';
        }
        return new String[] {kind, out.toString()};
    }

    private static Map<String, String> mysqlTls(Map<String, String> params) {
        Map<String, String> tls = new LinkedHashMap<>();
        String mode = null;
        if ("false".equalsIgnoreCase(params.get("useSSL"))) {
            mode = "DISABLED";
        }
        if ("true".equalsIgnoreCase(params.get("requireSSL"))) {
            mode = "REQUIRED";
        }
        if ("true".equalsIgnoreCase(params.get("verifyServerCertificate"))) {
            mode = "VERIFY_CA";
        }
        String sslMode = params.getOrDefault("sslMode", params.get("ssl-mode"));
        if (sslMode != null) {
            mode = switch (sslMode.toLowerCase(Locale.ROOT)) {
                case "disabled", "disable" -> "DISABLED";
                case "preferred", "prefer" -> "PREFERRED";
                case "required", "require", "trust" -> "REQUIRED";
                case "verify_ca", "verify-ca" -> "VERIFY_CA";
                case "verify_identity", "verify-full" -> "VERIFY_IDENTITY";
                default -> throw config("sslMode=" + sslMode + ": expected DISABLED, PREFERRED, REQUIRED,"
                        + " VERIFY_CA or VERIFY_IDENTITY (Connector/J), or disable, trust, verify-ca or"
                        + " verify-full (MariaDB Connector/J)");
            };
        }
        if (mode != null) {
            tls.put("ssl-mode", mode);
        }
        String ca = params.getOrDefault("serverSslCert", params.get("ssl-ca"));
        if (ca != null) {
            tls.put("ssl-ca", ca);
        }
        return tls;
    }

    private static Map<String, String> postgresTls(Map<String, String> params) {
        Map<String, String> tls = new LinkedHashMap<>();
        String mode = null;
        String ssl = params.get("ssl");
        if (ssl != null) {
            // pgJDBC: ssl=true without sslmode verifies the certificate and the host name.
            mode = ssl.equalsIgnoreCase("false") ? "disable" : "verify-full";
        }
        String sslmode = params.get("sslmode");
        if (sslmode != null) {
            mode = switch (sslmode.toLowerCase(Locale.ROOT)) {
                case "disable", "prefer", "require", "verify-ca", "verify-full" -> sslmode.toLowerCase(Locale.ROOT);
                case "allow" -> "prefer";
                default -> throw config("sslmode=" + sslmode + ": expected disable, allow, prefer,"
                        + " require, verify-ca or verify-full");
            };
        }
        if (mode != null) {
            tls.put("sslmode", mode);
        }
        String ca = params.get("sslrootcert");
        if (ca != null) {
            tls.put("sslrootcert", ca);
        }
        return tls;
    }

    /** Percent-encodes all but RFC 3986's unreserved characters (and '/' if asked). */
    static String encode(String s, boolean keepSlash) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~' || (keepSlash && c == '/')) {
                out.append(c);
            } else {
                out.append('%').append(String.format("%02X", (int) c));
            }
        }
        return out.toString();
    }

    /** The URL without its password parameter, for messages. */
    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&]*", "$1***");
    }

    private static RingflakeException config(String message) {
        return new RingflakeException("InvalidConfig", message);
    }
}
