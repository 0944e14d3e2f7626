local req = wrk.format("GET", "http://@HOST@/@FILE@", {Host="@HOST@"}); request = function() return req end
