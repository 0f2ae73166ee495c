/**
 * @module The console script's passkey part (docs/architecture.md §6, "Passkeys bound to the
 * decision"): it asks the console for WebAuthn options (JSON, same origin, the session's CSRF
 * token), calls `navigator.credentials.create` or `.get`, base64url-encodes the answer into a
 * hidden field of the form that started it, and sends that form. It decides nothing: the server
 * issued the challenge and checks the answer. Served inside the console's one script (assets.ts),
 * so the CSP needs no inline script.
 */

export const PASSKEY_SCRIPT = `
(function () {
  function b64u(buf) {
    var bytes = new Uint8Array(buf), s = '';
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  }
  function unb64u(text) {
    var s = text.replace(/-/g, '+').replace(/_/g, '/');
    while (s.length % 4) s += '=';
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function creationOptions(o) {
    var p = Object.assign({}, o);
    p.challenge = unb64u(o.challenge);
    p.user = Object.assign({}, o.user, { id: unb64u(o.user.id) });
    p.excludeCredentials = (o.excludeCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: unb64u(c.id) });
    });
    return { publicKey: p };
  }
  function requestOptions(o) {
    var p = Object.assign({}, o);
    delete p.commitment;
    delete p.scope;
    p.challenge = unb64u(o.challenge);
    p.allowCredentials = (o.allowCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: unb64u(c.id) });
    });
    return { publicKey: p };
  }
  function answer(cred) {
    var r = cred.response, out = { id: cred.id, rawId: b64u(cred.rawId), type: cred.type, response: {} };
    out.response.clientDataJSON = b64u(r.clientDataJSON);
    if (r.attestationObject) {
      out.response.attestationObject = b64u(r.attestationObject);
      out.response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      out.response.authenticatorData = b64u(r.authenticatorData);
      out.response.signature = b64u(r.signature);
      if (r.userHandle) out.response.userHandle = b64u(r.userHandle);
    }
    return JSON.stringify(out);
  }
  function post(url, body) {
    return fetch(url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body)
    }).then(function (res) {
      return res.json().then(function (data) {
        if (!res.ok) throw new Error(data && data.message ? data.message : 'refused');
        return data;
      });
    });
  }
  function say(form, text) {
    var box = document.getElementById('passkey-error');
    if (!box) {
      box = document.createElement('div');
      box.id = 'passkey-error';
      box.className = 'error';
      box.setAttribute('role', 'alert');
      form.parentNode.insertBefore(box, form);
    }
    box.textContent = text;
  }
  function field(form, name, value) {
    var input = form.querySelector('input[name="' + name + '"]');
    if (!input) {
      input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      form.appendChild(input);
    }
    input.value = value;
  }
  function csrf(form) {
    var input = form.querySelector('input[name=_csrf]');
    return input ? input.value : '';
  }
  function run(button, steps) {
    var form = button.form;
    button.disabled = true;
    steps(form).then(function () { form.submit(); }, function (err) {
      button.disabled = false;
      say(form, 'Passkey: ' + (err && err.message ? err.message : 'cancelled'));
    });
  }
  document.querySelectorAll('button[data-passkey]').forEach(function (button) {
    button.addEventListener('click', function (e) {
      e.preventDefault();
      var mode = button.getAttribute('data-passkey');
      if (!window.PublicKeyCredential || !navigator.credentials) {
        say(button.form, 'Passkey: this browser offers no passkeys here (a secure context is needed).');
        return;
      }
      run(button, function (form) {
        if (mode === 'login') {
          return post('/console/login/passkey-options', {}).then(function (o) {
            return navigator.credentials.get(requestOptions(o));
          }).then(function (cred) { field(form, 'passkey', answer(cred)); });
        }
        if (mode === 'enrol') {
          var stepUp = Promise.resolve();
          if (button.getAttribute('data-step-up') === 'passkey') {
            stepUp = post('/console/passkeys/step-up-options', { _csrf: csrf(form) }).then(function (o) {
              return navigator.credentials.get(requestOptions(o));
            }).then(function (cred) { field(form, 'step_up', answer(cred)); });
          }
          return stepUp.then(function () {
            return post('/console/passkeys/options', { _csrf: csrf(form) });
          }).then(function (o) {
            return navigator.credentials.create(creationOptions(o));
          }).then(function (cred) { field(form, 'credential', answer(cred)); });
        }
        var hash = form.querySelector('input[name=definition_hash]');
        var ask = {
          _csrf: csrf(form), kind: button.getAttribute('data-kind'), id: button.getAttribute('data-id'),
          decision: button.getAttribute('data-decision') || '', definition_hash: hash ? hash.value : ''
        };
        // A ticked scope goes into the challenge; the exact time it signed comes back with it.
        var scope = form.querySelector('input[name=scope]');
        if (scope && scope.checked) {
          ['scope', 'scope_calls', 'scope_amount_cents', 'scope_minutes'].forEach(function (name) {
            var input = form.querySelector('input[name="' + name + '"]');
            if (input) ask[name] = input.value;
          });
        }
        return post('/console/decisions/passkey-options', ask).then(function (o) {
          if (o.scope) field(form, 'scope_until', o.scope.until);
          return navigator.credentials.get(requestOptions(o));
        }).then(function (cred) { field(form, 'passkey', answer(cred)); });
      });
    });
  });
})();
`;
