-- The "-app" loads: the head a mobile app's networking layer sends (user agent,
-- accept lists, a request id, cookies; about 560 bytes in 10 fields) instead of
-- wrk's bare Host line, so the per-field cost of a proxy shows.
local req = wrk.format("GET", "http://@HOST@/@FILE@?device=ios&build=4521", {
    Host = "@HOST@",
    ["User-Agent"] = "MyApp/4.21.0 (iPhone; iOS 17.4.1; Scale/3.00) Alamofire/5.8.1",
    Accept = "application/json, text/plain, */*",
    ["Accept-Language"] = "en-GB;q=1.0, de-DE;q=0.9, fr-FR;q=0.8",
    ["Accept-Encoding"] = "gzip, deflate, br",
    ["X-Request-ID"] = "3f1c2a9e-7b44-4f0e-9a8c-1d2e3f4a5b6c",
    ["X-Client-Version"] = "4.21.0-4521",
    Cookie = "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl; theme=dark; consent=1",
    Connection = "keep-alive",
})
request = function() return req end
