local req = wrk.format("GET", "http://127.0.0.1:@ORIGIN_PORT@/@FILE@", {Host="127.0.0.1:@ORIGIN_PORT@"}); request = function() return req end
